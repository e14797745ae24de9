package imagegc

import (
	"fmt"
	"time"
)

// Periods of the kubelet's loops (pkg/kubelet/kubelet.go ImageGCPeriod and
// the detection loop of the image GC manager's Start).
const (
	GCPeriod     = 5 * time.Minute
	DetectPeriod = 5 * time.Minute
)

// Policy is upstream's ImageGCPolicy: the band the disk usage of the image
// filesystem is kept in, and the ages that protect and expire images.
type Policy struct {
	// HighThresholdPercent: a usage at or above it starts the space pass.
	HighThresholdPercent int
	// LowThresholdPercent: the space pass frees down to it.
	LowThresholdPercent int
	// MinAge: an image first detected less than MinAge ago is not removed
	// by the space pass (exactly MinAge old is eligible).
	MinAge time.Duration
	// MaxAge: when non-zero, an unused image whose last use is more than
	// MaxAge ago is removed whatever the usage, once the GC loop has run
	// for more than MaxAge. Zero turns the MaxAge pass off.
	MaxAge time.Duration
}

// DefaultPolicy is the kubelet's default: high 85, low 80, minimum age 2m,
// no maximum age.
func DefaultPolicy() Policy {
	return Policy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: 2 * time.Minute}
}

// Validate runs NewImageGCManager's checks in upstream's order and returns
// the first failure with upstream's text. Low == High is allowed here; the
// kubelet's configuration validation (ValidateKubeletConfig) is stricter.
func (p Policy) Validate() error {
	if p.HighThresholdPercent < 0 || p.HighThresholdPercent > 100 {
		return fmt.Errorf("invalid HighThresholdPercent %d, must be in range [0-100]", p.HighThresholdPercent)
	}
	if p.LowThresholdPercent < 0 || p.LowThresholdPercent > 100 {
		return fmt.Errorf("invalid LowThresholdPercent %d, must be in range [0-100]", p.LowThresholdPercent)
	}
	if p.LowThresholdPercent > p.HighThresholdPercent {
		return fmt.Errorf("LowThresholdPercent %d can not be higher than HighThresholdPercent %d", p.LowThresholdPercent, p.HighThresholdPercent)
	}
	return nil
}

// PeriodicGCEnabled reports whether the kubelet starts its image GC loop:
// it does not when the high threshold is 100 and MaxAge is 0
// (StartGarbageCollection). DeleteUnusedImages still runs under disk pressure.
func (p Policy) PeriodicGCEnabled() bool {
	return !(p.HighThresholdPercent == 100 && p.MaxAge == 0)
}

// KubeletConfig holds the image GC fields of the kubelet's configuration
// (KubeletConfiguration), after defaulting.
type KubeletConfig struct {
	ImageGCHighThresholdPercent int32
	ImageGCLowThresholdPercent  int32
	ImageMinimumGCAge           time.Duration
	ImageMaximumGCAge           time.Duration
}

// Policy is the ImageGCPolicy the kubelet builds from the configuration.
func (c KubeletConfig) Policy() Policy {
	return Policy{
		HighThresholdPercent: int(c.ImageGCHighThresholdPercent),
		LowThresholdPercent:  int(c.ImageGCLowThresholdPercent),
		MinAge:               c.ImageMinimumGCAge,
		MaxAge:               c.ImageMaximumGCAge,
	}
}

// ValidateKubeletConfig runs the image GC rules of the kubelet's
// configuration validation (pkg/kubelet/apis/config/validation) in
// upstream's order; every rule runs and the failures are aggregated as
// upstream's utilerrors.NewAggregate prints them (one text alone, several
// as "[a, b]"). The ImageMaximumGCAge feature gate is GA and locked on in
// v1.36, so its rule cannot fail and is not checked.
func ValidateKubeletConfig(c KubeletConfig) error {
	var errs []error
	if c.ImageGCHighThresholdPercent < 0 || c.ImageGCHighThresholdPercent > 100 {
		errs = append(errs, fmt.Errorf("invalid configuration: imageGCHighThresholdPercent (--image-gc-high-threshold) %v must be between 0 and 100, inclusive", c.ImageGCHighThresholdPercent))
	}
	if c.ImageGCLowThresholdPercent < 0 || c.ImageGCLowThresholdPercent > 100 {
		errs = append(errs, fmt.Errorf("invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) %v must be between 0 and 100, inclusive", c.ImageGCLowThresholdPercent))
	}
	if c.ImageGCLowThresholdPercent >= c.ImageGCHighThresholdPercent {
		errs = append(errs, fmt.Errorf("invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) %v must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) %v", c.ImageGCLowThresholdPercent, c.ImageGCHighThresholdPercent))
	}
	if c.ImageMinimumGCAge < 0 {
		errs = append(errs, fmt.Errorf("invalid configuration: imageMinimumGCAge %v must not be negative", c.ImageMinimumGCAge))
	}
	if c.ImageMaximumGCAge < 0 {
		errs = append(errs, fmt.Errorf("invalid configuration: imageMaximumGCAge %v must not be negative", c.ImageMaximumGCAge))
	}
	if c.ImageMaximumGCAge > 0 && c.ImageMaximumGCAge <= c.ImageMinimumGCAge {
		errs = append(errs, fmt.Errorf("invalid configuration: imageMaximumGCAge %v must be greater than imageMinimumGCAge %v", c.ImageMaximumGCAge, c.ImageMinimumGCAge))
	}
	return aggregate(errs)
}
