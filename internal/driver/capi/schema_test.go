package capi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/yaml"
)

// crdsDir finds the CRD manifests: $OKM_CRDS_DIR, else shared/crds beside
// the repository (the layout of this workplace and of CI).
func crdsDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("OKM_CRDS_DIR"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			for _, c := range []string{filepath.Join(dir, "..", "shared", "crds"), filepath.Join(dir, "shared", "crds")} {
				if _, err := os.Stat(c); err == nil {
					return c
				}
			}
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CRD manifests not found: set OKM_CRDS_DIR")
	}
	t.Skip("CRD manifests not found: set OKM_CRDS_DIR to run the schema checks")
	return ""
}

// crdSchema is the schema of one served version of a CRD.
type crdSchema struct {
	validator  *validate.SchemaValidator
	structural *structuralschema.Structural
}

// loadSchemas reads every CRD under dir, keyed "<group>/<version>, Kind=<kind>".
func loadSchemas(t *testing.T, dir string) map[string]crdSchema {
	t.Helper()
	out := map[string]crdSchema{}
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs under %s: %v", dir, err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &crd); err != nil || crd.Kind != "CustomResourceDefinition" {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			var internal apiextensions.JSONSchemaProps
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			// The CRD schema is OpenAPI v3 JSON, which kube-openapi reads.
			raw, err := json.Marshal(v.Schema.OpenAPIV3Schema)
			if err != nil {
				t.Fatal(err)
			}
			var sch spec.Schema
			if err := json.Unmarshal(raw, &sch); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			validator := validate.NewSchemaValidator(&sch, nil, "", strfmt.Default)
			st, err := structuralschema.NewStructural(&internal)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out[crd.Spec.Group+"/"+v.Name+", Kind="+crd.Spec.Names.Kind] = crdSchema{validator: validator, structural: st}
		}
	}
	return out
}

// checkAgainstCRD validates obj against its CRD and reports unknown fields,
// which the API server would silently prune.
func checkAgainstCRD(t *testing.T, schemas map[string]crdSchema, obj map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	key := u.GroupVersionKind().String()
	s, ok := schemas[key]
	if !ok {
		t.Fatalf("no CRD for %s", key)
	}
	name := u.GetKind() + " " + u.GetName()
	if res := s.validator.Validate(u.Object); !res.IsValid() {
		t.Errorf("%s fails its schema: %v", name, res.Errors)
	}
	opts := structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}
	if pruned := pruning.PruneWithOptions(u.Object, s.structural, true, opts); len(pruned) > 0 {
		t.Errorf("%s has fields unknown to its schema: %s", name, strings.Join(pruned, ", "))
	}
}

// TestObjectsMatchCRDs checks every built object, and every template after
// the class patches are applied, against the CRDs of Cluster API v1.14 and
// CAPO v0.14 (driver-capi.md § 9.4 b): field names, list-versus-map
// shapes and enums.
func TestObjectsMatchCRDs(t *testing.T) {
	schemas := loadSchemas(t, crdsDir(t))
	for _, obj := range ClassObjects(DefaultNamespace, DefaultClassVersion) {
		u, err := toUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		checkAgainstCRD(t, schemas, u.Object)
	}
	c, err := BuildCluster(testInput())
	if err != nil {
		t.Fatal(err)
	}
	u, err := toUnstructured(c)
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstCRD(t, schemas, u.Object)
}
