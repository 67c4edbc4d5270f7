package conductor

import (
	"crypto/rand"
	"math/big"
)

// clGreekLetters is the word list of Magnum's name generator
// (magnum/common/name_generator.py).
var clGreekLetters = []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
	"kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi",
	"psi", "omega"}

// clGenerateName returns "<greek letter>-<1..24>-<kind>", as Magnum names
// unnamed clusters ("omicron-23-cluster").
func clGenerateName(kind string) string {
	w, _ := rand.Int(rand.Reader, big.NewInt(int64(len(clGreekLetters))))
	n, _ := rand.Int(rand.Reader, big.NewInt(24))
	return clGreekLetters[w.Int64()] + "-" + n.Add(n, big.NewInt(1)).String() + "-" + kind
}
