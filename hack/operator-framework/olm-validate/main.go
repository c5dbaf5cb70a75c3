// Command olm-validate checks an OLM bundle directory with the operator framework's own validators
// (github.com/operator-framework/api/pkg/validation), the checks `operator-sdk bundle validate` runs, so the
// bundle is validated without operator-sdk (whose release binaries are not served here). upstream's
// cmd/operator-verify runs only the default validators plus the deprecated OperatorHub one and always exits 0,
// hence this small main.
//
//	olm-validate [--select SUITE_OR_NAME,...] [--optional-values KEY=VALUE]... BUNDLE_DIR
//
// Default validators always run (ClusterServiceVersion, CustomResourceDefinition, Bundle). --select adds
// optional ones by name or suite (default "operatorframework"): see `olm-validate --list`. Errors and warnings
// are printed one a line as "ERROR|WARN <manifest>: <message>"; the exit status is 1 when any error was found,
// 2 when the bundle could not be loaded or the flags are wrong, 0 otherwise (warnings only).
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	apimanifests "github.com/operator-framework/api/pkg/manifests"
	apivalidation "github.com/operator-framework/api/pkg/validation"
	apierrors "github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
)

type optional struct {
	name   string
	suites []string
	desc   string
	v      interfaces.Validator
}

// The optional validators, grouped in suites as operator-sdk's --select-optional labels them. The
// operatorframework suite uses the OperatorHub v2 validators (operator-framework/api deprecates OperatorHubValidator
// in their favour, same checks); multiarch pulls every image with docker or podman, so it only runs when selected.
var optionals = []optional{
	{"operatorhubv2", []string{"operatorframework", "operatorhub"}, "OperatorHub.io metadata (CSV fields, icon, links, maintainers, categories)", apivalidation.OperatorHubV2Validator},
	{"standardcapabilities", []string{"operatorframework", "operatorhub"}, "capabilities annotation is one of OperatorHub's levels", apivalidation.StandardCapabilitiesValidator},
	{"standardcategories", []string{"operatorframework", "operatorhub"}, "categories annotation uses OperatorHub's categories", apivalidation.StandardCategoriesValidator},
	{"alpha-deprecated-apis", []string{"operatorframework"}, "manifests use no API removed by minKubeVersion (or the k8s-version optional value)", apivalidation.AlphaDeprecatedAPIsValidator},
	{"good-practices", []string{"operatorframework"}, "good practices: resource requests, no CRD without description, channel naming", apivalidation.GoodPracticesValidator},
	{"community", []string{"community"}, "community-operators catalog criteria (deprecated upstream; index-path optional value)", apivalidation.CommunityOperatorValidator},
	{"object", []string{"object"}, "bundle objects such as PodDisruptionBudgets and PriorityClasses", apivalidation.ObjectValidator},
	{"multiarch", []string{"multiarch"}, "images support the architectures the CSV's labels declare (pulls them; container-tools optional value)", apivalidation.MultipleArchitecturesValidator},
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("olm-validate", flag.ContinueOnError)
	sel := fs.String("select", "operatorframework", "comma-separated optional validator names or suites (operatorframework, operatorhub, community, object, multiarch, all, none)")
	list := fs.Bool("list", false, "list the optional validators and exit")
	var values listFlag
	fs.Var(&values, "optional-values", "KEY=VALUE passed to the optional validators (k8s-version, index-path, container-tools); repeatable")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: olm-validate [--select SUITES] [--optional-values KEY=VALUE]... BUNDLE_DIR")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *list {
		for _, o := range optionals {
			fmt.Printf("%-22s suites=%-34s %s\n", o.name, strings.Join(o.suites, ","), o.desc)
		}
		return 0
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	dir := fs.Arg(0)

	selected, err := selectOptionals(*sel)
	if err != nil {
		fmt.Fprintf(os.Stderr, "olm-validate: %v; see `olm-validate --list`\n", err)
		return 2
	}
	optionalValues := map[string]string{}
	for _, kv := range values {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			fmt.Fprintf(os.Stderr, "olm-validate: --optional-values %q is not KEY=VALUE\n", kv)
			return 2
		}
		optionalValues[k] = v
	}

	bundle, err := apimanifests.GetBundleFromDir(dir)
	if err != nil || bundle == nil {
		fmt.Fprintf(os.Stderr, "olm-validate: cannot load an OLM bundle from %s (manifests/ with one ClusterServiceVersion, metadata/annotations.yaml): %v\n", dir, err)
		return 2
	}

	// As operator-sdk does: the default validators see the bundle, its CSV and CRDs; the optional ones also every
	// other object of the bundle and the optional values.
	results := apivalidation.DefaultBundleValidators.Validate(bundle.ObjectsToValidate()...)
	objs := bundle.ObjectsToValidate()
	for _, obj := range bundle.Objects {
		objs = append(objs, obj)
	}
	objs = append(objs, optionalValues)
	names := []string{}
	for _, o := range selected {
		results = append(results, o.v.Validate(objs...)...)
		names = append(names, o.name)
	}

	errs, warns := 0, 0
	for _, r := range results {
		for _, e := range r.Errors {
			fmt.Printf("ERROR %s: %s\n", r.Name, describe(e))
			errs++
		}
		for _, w := range r.Warnings {
			fmt.Printf("WARN %s: %s\n", r.Name, describe(w))
			warns++
		}
	}
	fmt.Fprintf(os.Stderr, "olm-validate: %s: %d error(s), %d warning(s) (default validators + %s)\n",
		dir, errs, warns, strings.Join(append([]string{}, names...), ", "))
	if errs > 0 {
		return 1
	}
	return 0
}

func describe(e apierrors.Error) string {
	return strings.ReplaceAll(e.Error(), "\n", " ")
}

func selectOptionals(spec string) ([]optional, error) {
	want := map[string]bool{}
	for _, s := range strings.Split(spec, ",") {
		if s = strings.TrimSpace(s); s != "" {
			want[s] = true
		}
	}
	if want["none"] {
		return nil, nil
	}
	var out []optional
	matched := map[string]bool{}
	for _, o := range optionals {
		hit := want["all"] && o.name != "multiarch"
		for _, key := range append([]string{o.name}, o.suites...) {
			if want[key] {
				hit = true
				matched[key] = true
			}
		}
		if hit {
			out = append(out, o)
		}
	}
	var unknown []string
	for k := range want {
		if !matched[k] && k != "all" {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		return nil, fmt.Errorf("no optional validator or suite named %s", strings.Join(unknown, ", "))
	}
	return out, nil
}
