package cgroups

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nodeproof/nodeproof/core/pod"
)

// Page sizes the package accepts: powers of two from 4 KiB (64 KiB is
// arm64's smallest hugepage) to 16 GiB (ppc64's largest).
const (
	minPageSize = 4 << 10
	maxPageSize = 16 << 30
)

func checkPageSize(size int64) error {
	if size < minPageSize || size > maxPageSize || size&(size-1) != 0 {
		return fmt.Errorf("page size %d must be a power of two from %d to %d bytes", size, int64(minPageSize), int64(maxPageSize))
	}
	return nil
}

// quantitySuffixes are the suffixes of a Kubernetes quantity with an
// integer value; fractions and exponents never name a hugepage size.
var quantitySuffixes = []struct {
	suffix string
	factor int64
}{
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"Pi", 1 << 50},
	{"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15},
}

// HugePageSizeFromResourceName returns the page size in bytes of a
// hugepages-<size> resource name ("hugepages-2Mi" → 2097152). The size must
// be a page size this package accepts; upstream would silently file an
// unparsable name under size 0, which API validation makes unreachable.
func HugePageSizeFromResourceName(name pod.ResourceName) (int64, error) {
	s, ok := strings.CutPrefix(string(name), pod.HugePagesPrefix)
	if !ok {
		return 0, fmt.Errorf("%q is not a hugepages resource", name)
	}
	factor := int64(1)
	for _, u := range quantitySuffixes {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, factor = rest, u.factor
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > maxPageSize/factor {
		return 0, fmt.Errorf("%q does not name a page size", name)
	}
	size := n * factor
	if err := checkPageSize(size); err != nil {
		return 0, fmt.Errorf("%q: %v", name, err)
	}
	return size, nil
}

// HugePageResourceName is the canonical resource name of a page size
// ("hugepages-2Mi", "hugepages-1Gi"), as the node reports its capacity.
func HugePageResourceName(size int64) pod.ResourceName {
	return pod.ResourceName(pod.HugePagesPrefix + binarySI(size))
}

// HugePageUnitSize names a page size the way the kernel names hugetlb
// files: the size divided by 1024 as often as it divides evenly, with B,
// KB, MB, GB, TB or PB ("2MB", "1GB", "64KB"). It fails for a size that
// does not divide into its largest unit, as upstream's
// HugePageUnitSizeFromByteSize does.
func HugePageUnitSize(size int64) (string, error) {
	units := &hugePageUnits
	if size <= 0 {
		return "", fmt.Errorf("page size %d must be positive", size)
	}
	i := 0
	for size%1024 == 0 && i < len(units)-1 {
		size /= 1024
		i++
	}
	if size > 1024 && i < len(units)-1 {
		return "", fmt.Errorf("size: %d%s must be guaranteed to divisible into the largest units", size, units[i])
	}
	return strconv.FormatInt(size, 10) + units[i], nil
}

var hugePageUnits = [...]string{"B", "KB", "MB", "GB", "TB", "PB"}

// formatQuantity prints a quantity the way a Kubernetes resource.Quantity
// prints in its canonical form, choosing the format the kubelet gives each
// resource: cpu DecimalSI in millicores ("3", "3500m"), byte resources
// BinarySI ("8Gi", "100Mi"), anything else DecimalSI ("1k").
func formatQuantity(name pod.ResourceName, v int64) string {
	switch {
	case name == pod.CPU:
		return decimalSI(v, -3)
	case name == pod.Memory || name == pod.EphemeralStorage || pod.IsHugePages(name):
		return binarySI(v)
	}
	return decimalSI(v, 0)
}

// decimalSI prints mantissa×10^exp with the largest exponent that is a
// multiple of three and keeps the mantissa whole.
func decimalSI(mantissa int64, exp int) string {
	if mantissa == 0 {
		return "0"
	}
	for exp%3 != 0 {
		mantissa *= 10
		exp--
	}
	for mantissa%1000 == 0 && exp < 18 {
		mantissa /= 1000
		exp += 3
	}
	suffix := map[int]string{-3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}[exp]
	return strconv.FormatInt(mantissa, 10) + suffix
}

// binarySI prints a byte count with the largest power-of-1024 suffix that
// keeps it whole; below 1024 the Quantity type falls back to DecimalSI
// (so 1000 bytes print as "1k").
func binarySI(v int64) string {
	if v > -1024 && v < 1024 {
		return decimalSI(v, 0)
	}
	suffixes := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
	i := 0
	for v%1024 == 0 && i < len(suffixes)-1 {
		v /= 1024
		i++
	}
	return strconv.FormatInt(v, 10) + suffixes[i]
}
