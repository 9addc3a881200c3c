package ptxgen

import (
	"fmt"
	"regexp"
	"strings"
)

// ptxHeader matches a module's header directives, which a module of
// several kernels states once.
var ptxHeader = regexp.MustCompile(`(?m)^[ \t]*\.(version|target|address_size)\b.*$`)

// Module returns the text of one PTX module holding kernels ks: the header
// directives (.version, .target, .address_size) once, then each kernel's
// text without them. A kernel's module holds nothing but its header and
// its entry, so the entries only need distinct names. The CUDA JIT costs
// a module a fixed 20-30 ms beside what its code costs (ptxas on an H100:
// about 25 ms for a 150-line kernel, 50 ms for a 750-line one), so
// kernels that will all be launched load faster together. It fails when
// ks is empty, when two kernels share a name, or when their headers
// differ.
func Module(ks ...*Kernel) (string, error) {
	if len(ks) == 0 {
		return "", fmt.Errorf("ptxgen: a module of no kernel")
	}
	if len(ks) == 1 {
		return ks[0].PTX, nil
	}
	header := ptxHeader.FindAllString(ks[0].PTX, -1)
	names := map[string]bool{}
	var sb strings.Builder
	for _, h := range header {
		sb.WriteString(strings.TrimSpace(h))
		sb.WriteByte('\n')
	}
	for _, k := range ks {
		if names[k.Name] {
			return "", fmt.Errorf("ptxgen: two kernels named %s in one module", k.Name)
		}
		names[k.Name] = true
		h := ptxHeader.FindAllString(k.PTX, -1)
		if len(h) != len(header) {
			return "", fmt.Errorf("ptxgen: kernel %s's header (%q) differs from %s's (%q)", k.Name, h, ks[0].Name, header)
		}
		for i := range h {
			if strings.TrimSpace(h[i]) != strings.TrimSpace(header[i]) {
				return "", fmt.Errorf("ptxgen: kernel %s's header (%q) differs from %s's (%q)", k.Name, h, ks[0].Name, header)
			}
		}
		sb.WriteString(ptxHeader.ReplaceAllString(k.PTX, ""))
		sb.WriteByte('\n')
	}
	return sb.String(), nil
}
