//! The names Magnum gives resources created without one
//! (magnum/common/name_generator.py): `<greek letter>-<1..24>-<kind>`.

/// The words of Magnum's name generator.
const GREEK_LETTERS: [&str; 24] = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi",
    "psi", "omega",
];

/// A random `<greek letter>-<1..24>-<kind>` name (`kind` is `cluster`,
/// `template` or `federation`).
pub fn generate(kind: &str) -> String {
    // The randomness of a version 4 UUID: names need no other source.
    let r = uuid::Uuid::new_v4().as_u128();
    let letters = GREEK_LETTERS.len() as u128;
    let letter = GREEK_LETTERS[(r % letters) as usize];
    let n = (r / letters) % 24 + 1;
    format!("{letter}-{n}-{kind}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_have_magnums_shape() {
        for _ in 0..200 {
            let name = generate("federation");
            let parts: Vec<&str> = name.split('-').collect();
            assert_eq!(parts.len(), 3, "{name}");
            assert!(GREEK_LETTERS.contains(&parts[0]), "{name}");
            let n: u32 = parts[1].parse().unwrap_or(0);
            assert!((1..=24).contains(&n), "{name}");
            assert_eq!(parts[2], "federation");
            // Magnum's cluster and federation names must match its pattern.
            assert!(magnum_domain::validation::is_name(&name), "{name}");
        }
    }
}
