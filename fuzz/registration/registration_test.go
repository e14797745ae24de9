package registration

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
)

// An independent statement of upstream's IsExtendedResourceName, written with
// apimachinery's regular expressions rather than the core's hand-written
// scanner, so the two can disagree.
var (
	qualifiedNamePart = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
	dns1123Subdomain  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

func oracleExtendedResourceName(name string) bool {
	if !strings.Contains(name, "/") || strings.Contains(name, "kubernetes.io/") || strings.HasPrefix(name, "requests.") {
		return false
	}
	prefix, part, _ := strings.Cut("requests."+name, "/")
	if strings.Contains(part, "/") {
		return false
	}
	return len(prefix) <= 253 && dns1123Subdomain.MatchString(prefix) &&
		len(part) <= 63 && qualifiedNamePart.MatchString(part)
}

// FuzzRegisterRequest checks registration validation against the oracle:
// it never panics, it accepts exactly the supported version with a valid
// extended resource name, and it rejects with upstream's message, version
// first.
func FuzzRegisterRequest(f *testing.F) {
	f.Fuzz(func(t *testing.T, version, endpoint, name string) {
		err := dm.ValidateRegistration(dm.RegisterRequest{Version: version, Endpoint: endpoint, ResourceName: name})
		kind, _ := dm.KindOf(err)
		// The checks report with t.Fatalf, not testify: linking testify
		// puts its (and net/http's) coverage counters in the test binary,
		// which the engine copies and compares after every execution
		// (fuzz/doc.go has the figures).
		switch {
		case version != dm.Version:
			// strconv.Quote is fmt's %q for a string, without fmt's
			// machinery, which took a tenth of each execution.
			want := "requested API version " + strconv.Quote(version) + ` is not supported by kubelet. Supported version is ["v1beta1"]`
			if err == nil || err.Error() != want || kind != dm.KindUnsupportedVersion {
				t.Fatalf("version %q: error %v of kind %v, want %q of kind %v", version, err, kind, want, dm.KindUnsupportedVersion)
			}
		case !oracleExtendedResourceName(name):
			want := "the ResourceName " + strconv.Quote(name) + " is invalid"
			if err == nil || err.Error() != want || kind != dm.KindInvalidResourceName {
				t.Fatalf("name %q: error %v of kind %v, want %q of kind %v", name, err, kind, want, dm.KindInvalidResourceName)
			}
		case err != nil:
			t.Fatalf("valid registration (version %q, name %q) rejected: %v", version, name, err)
		}
	})
}
