//! What the host holds of one watched kind in one namespace: the objects
//! (without `metadata.managedFields`), whether the server serves the kind
//! and whether the copy is complete, the clusters watching it with the
//! labels their drivers' selectors name, and an index of the objects by
//! those labels. Plain data: the reflector task fills it, the reconciler
//! reads it, and every change answers the clusters it concerns.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use driver_host::KubeObject;

/// Label key and value.
type Pair = (String, String);

/// One object and what is indexed of it.
struct Held {
    object: Arc<KubeObject>,
    labels: BTreeMap<String, String>,
}

/// The objects of one (api version, kind, namespace) and who watches them.
#[derive(Default)]
pub struct Store {
    /// `None` until discovery has answered.
    served: Option<bool>,
    /// Whether `objects` is complete: set by the first full list, kept
    /// through a re-list (the previous copy stays until the new one is
    /// complete).
    synced: bool,
    /// By name: one namespace per store, so this is namespace-and-name
    /// order.
    objects: BTreeMap<String, Held>,
    /// The bytes of the objects' JSON.
    bytes: usize,
    /// Object names by label pair, for the label keys in `indexed`.
    index: HashMap<Pair, BTreeSet<String>>,
    /// The label keys the watchers' selectors start with.
    indexed: BTreeSet<String>,
    /// The labels each watching cluster's selectors carry.
    watchers: HashMap<String, Vec<BTreeMap<String, String>>>,
    /// Watching clusters by the first label pair of a selector; selectors
    /// without labels are in `unlabelled`.
    by_pair: HashMap<Pair, HashSet<String>>,
    unlabelled: HashSet<String>,
}

/// What a store holds for one selector.
pub struct Observed {
    pub served: bool,
    pub synced: bool,
    pub objects: Vec<Arc<KubeObject>>,
    pub bytes: usize,
}

fn matches(selector: &BTreeMap<String, String>, labels: &BTreeMap<String, String>) -> bool {
    selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

impl Store {
    /// Whether the server serves the kind (`None`: not known yet).
    pub fn served(&self) -> Option<bool> {
        self.served
    }

    /// How many objects, and their bytes.
    pub fn size(&self) -> (usize, usize) {
        (self.objects.len(), self.bytes)
    }

    /// Whether no cluster watches the store any more.
    pub fn unwatched(&self) -> bool {
        self.watchers.is_empty()
    }

    /// The clusters whose selectors match an object with `labels`.
    fn concerned(&self, labels: &BTreeMap<String, String>, out: &mut BTreeSet<String>) {
        let mut candidates: Vec<&String> = self.unlabelled.iter().collect();
        for (k, v) in labels {
            if let Some(cs) = self.by_pair.get(&(k.clone(), v.clone())) {
                candidates.extend(cs);
            }
        }
        for c in candidates {
            if out.contains(c) {
                continue;
            }
            if self
                .watchers
                .get(c)
                .is_some_and(|sels| sels.iter().any(|s| matches(s, labels)))
            {
                out.insert(c.clone());
            }
        }
    }

    /// Every watching cluster.
    fn everyone(&self) -> Vec<String> {
        self.watchers.keys().cloned().collect()
    }

    fn index_object(&mut self, name: &str, labels: &BTreeMap<String, String>) {
        for k in &self.indexed {
            if let Some(v) = labels.get(k) {
                self.index
                    .entry((k.clone(), v.clone()))
                    .or_default()
                    .insert(name.to_string());
            }
        }
    }

    fn unindex_object(&mut self, name: &str, labels: &BTreeMap<String, String>) {
        for k in &self.indexed {
            if let Some(v) = labels.get(k) {
                let pair = (k.clone(), v.clone());
                if let Some(names) = self.index.get_mut(&pair) {
                    names.remove(name);
                    if names.is_empty() {
                        self.index.remove(&pair);
                    }
                }
            }
        }
    }

    /// Stores an added or changed object; the clusters concerned by it
    /// before or after.
    pub fn apply(&mut self, object: KubeObject) -> Vec<String> {
        let labels = object.labels();
        let name = object.name.clone();
        let mut out = BTreeSet::new();
        if let Some(old) = self.remove_held(&name) {
            self.concerned(&old.labels, &mut out);
        }
        self.concerned(&labels, &mut out);
        self.insert_held(name, object, labels);
        out.into_iter().collect()
    }

    /// Forgets a deleted object; the clusters it concerned.
    pub fn delete(&mut self, name: &str) -> Vec<String> {
        let mut out = BTreeSet::new();
        if let Some(old) = self.remove_held(name) {
            self.concerned(&old.labels, &mut out);
        }
        out.into_iter().collect()
    }

    fn insert_held(&mut self, name: String, object: KubeObject, labels: BTreeMap<String, String>) {
        self.index_object(&name, &labels);
        self.bytes += object.json.len();
        self.objects.insert(
            name,
            Held {
                object: Arc::new(object),
                labels,
            },
        );
    }

    fn remove_held(&mut self, name: &str) -> Option<Held> {
        let old = self.objects.remove(name)?;
        self.bytes -= old.object.json.len();
        self.unindex_object(name, &old.labels);
        Some(old)
    }

    /// Replaces every object with a complete list (after a watch started
    /// over): the clusters concerned by an object added, changed or gone,
    /// or every watcher when this is the first complete copy.
    pub fn replace(&mut self, objects: Vec<KubeObject>) -> Vec<String> {
        let first = !self.synced;
        self.synced = true;
        let mut out = BTreeSet::new();
        let fresh: BTreeMap<String, KubeObject> =
            objects.into_iter().map(|o| (o.name.clone(), o)).collect();
        let gone: Vec<String> = self
            .objects
            .keys()
            .filter(|n| !fresh.contains_key(*n))
            .cloned()
            .collect();
        for name in gone {
            out.extend(self.delete(&name));
        }
        for (name, object) in fresh {
            let same = self
                .objects
                .get(&name)
                .is_some_and(|h| h.object.json == object.json);
            if !same {
                out.extend(self.apply(object));
            }
        }
        if first {
            return self.everyone();
        }
        out.into_iter().collect()
    }

    /// Records whether the server serves the kind: one it does not serve
    /// has no objects, and that is a complete answer. Every watcher, when
    /// that changed.
    pub fn set_served(&mut self, served: bool) -> Vec<String> {
        if self.served == Some(served) {
            return Vec::new();
        }
        self.served = Some(served);
        if !served {
            self.objects.clear();
            self.index.clear();
            self.bytes = 0;
            self.synced = true;
        } else {
            // Served from now on: complete once listed.
            self.synced = false;
        }
        self.everyone()
    }

    /// `cluster` watches the objects carrying `selectors`' labels (each a
    /// selector of this store's kind and namespace), instead of what it
    /// watched before.
    pub fn watch(&mut self, cluster: &str, selectors: Vec<BTreeMap<String, String>>) {
        self.unwatch(cluster);
        for s in &selectors {
            match s.iter().next() {
                Some((k, v)) => {
                    if self.indexed.insert(k.clone()) {
                        self.reindex(k);
                    }
                    self.by_pair
                        .entry((k.clone(), v.clone()))
                        .or_default()
                        .insert(cluster.to_string());
                }
                None => {
                    self.unlabelled.insert(cluster.to_string());
                }
            }
        }
        self.watchers.insert(cluster.to_string(), selectors);
    }

    /// Indexes every object by the label key `key`, newly watched.
    fn reindex(&mut self, key: &str) {
        for (name, held) in &self.objects {
            if let Some(v) = held.labels.get(key) {
                self.index
                    .entry((key.to_string(), v.clone()))
                    .or_default()
                    .insert(name.clone());
            }
        }
    }

    /// `cluster` watches nothing here any more.
    pub fn unwatch(&mut self, cluster: &str) {
        let Some(old) = self.watchers.remove(cluster) else {
            return;
        };
        for s in old {
            match s.into_iter().next() {
                Some(pair) => {
                    if let Some(cs) = self.by_pair.get_mut(&pair) {
                        cs.remove(cluster);
                        if cs.is_empty() {
                            self.by_pair.remove(&pair);
                        }
                    }
                }
                None => {
                    self.unlabelled.remove(cluster);
                }
            }
        }
    }

    /// The objects carrying every label of `labels`, in name order.
    pub fn observe(&self, labels: &BTreeMap<String, String>) -> Observed {
        let served = self.served.unwrap_or(false);
        let synced = self.synced && self.served.is_some();
        let mut objects = Vec::new();
        let mut bytes = 0;
        let mut take = |h: &Held| {
            if matches(labels, &h.labels) {
                bytes += h.object.json.len();
                objects.push(h.object.clone());
            }
        };
        match labels.iter().next() {
            Some((k, v)) if self.indexed.contains(k) => {
                if let Some(names) = self.index.get(&(k.clone(), v.clone())) {
                    for n in names {
                        if let Some(h) = self.objects.get(n) {
                            take(h);
                        }
                    }
                }
            }
            _ => self.objects.values().for_each(take),
        }
        Observed {
            served,
            synced,
            objects,
            bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cm(name: &str, labels: &[(&str, &str)], data: &str) -> KubeObject {
        let l: serde_json::Map<String, serde_json::Value> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
            .collect();
        KubeObject {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("ns".into()),
            name: name.into(),
            json: serde_json::json!({"metadata": {"name": name, "labels": l}, "data": {"d": data}})
                .to_string(),
        }
    }

    fn sel(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn names(o: &Observed) -> Vec<String> {
        o.objects.iter().map(|o| o.name.clone()).collect()
    }

    #[test]
    fn a_change_concerns_the_clusters_whose_selectors_it_matches_before_or_after() {
        let mut s = Store::default();
        s.watch("a", vec![sel(&[("cluster", "a")])]);
        s.watch("b", vec![sel(&[("cluster", "b"), ("role", "cp")])]);
        s.watch("all", vec![sel(&[])]);
        assert_eq!(s.set_served(true).len(), 3);
        assert_eq!(
            s.replace(vec![]).len(),
            3,
            "the first complete copy concerns everyone"
        );
        assert_eq!(s.apply(cm("x", &[("cluster", "a")], "1")), ["a", "all"]);
        // b's selector needs both labels.
        assert_eq!(s.apply(cm("y", &[("cluster", "b")], "1")), ["all"]);
        assert_eq!(
            s.apply(cm("y", &[("cluster", "b"), ("role", "cp")], "2")),
            ["all", "b"]
        );
        // Relabelled from a to b: both hear of it.
        assert_eq!(
            s.apply(cm("x", &[("cluster", "b"), ("role", "cp")], "3")),
            ["a", "all", "b"]
        );
        assert_eq!(s.delete("x"), ["all", "b"]);
        assert!(s.delete("x").is_empty());
        s.unwatch("all");
        assert_eq!(
            s.apply(cm("z", &[("other", "1")], "1")),
            Vec::<String>::new()
        );
    }

    #[test]
    fn observations_come_from_the_index_in_name_order() {
        let mut s = Store::default();
        s.set_served(true);
        s.replace(vec![
            cm("c", &[("cluster", "a")], "1"),
            cm("b", &[("cluster", "b")], "1"),
            cm("a", &[("cluster", "a"), ("role", "cp")], "1"),
        ]);
        // Watching a label key indexes the objects already held.
        s.watch("a", vec![sel(&[("cluster", "a")])]);
        let o = s.observe(&sel(&[("cluster", "a")]));
        assert!(o.served && o.synced);
        assert_eq!(names(&o), ["a", "c"]);
        assert_eq!(
            names(&s.observe(&sel(&[("cluster", "a"), ("role", "cp")]))),
            ["a"]
        );
        assert_eq!(names(&s.observe(&sel(&[]))), ["a", "b", "c"]);
        // An unindexed key is scanned.
        assert_eq!(names(&s.observe(&sel(&[("role", "cp")]))), ["a"]);
        s.delete("a");
        assert_eq!(names(&s.observe(&sel(&[("cluster", "a")]))), ["c"]);
        let (n, bytes) = s.size();
        assert_eq!(n, 2);
        assert_eq!(bytes, s.observe(&sel(&[])).bytes);
    }

    #[test]
    fn a_copy_is_complete_only_once_listed_and_a_relist_concerns_only_what_changed() {
        let mut s = Store::default();
        s.watch("a", vec![sel(&[("cluster", "a")])]);
        let o = s.observe(&sel(&[("cluster", "a")]));
        assert!(!o.synced, "nothing known yet");
        s.set_served(true);
        assert!(!s.observe(&sel(&[("cluster", "a")])).synced);
        s.apply(cm("x", &[("cluster", "a")], "1"));
        assert!(
            !s.observe(&sel(&[("cluster", "a")])).synced,
            "a watch event is not a list"
        );
        assert_eq!(s.replace(vec![cm("x", &[("cluster", "a")], "1")]), ["a"]);
        assert!(s.observe(&sel(&[("cluster", "a")])).synced);
        // The same list again: nothing changed, nobody concerned.
        assert!(
            s.replace(vec![cm("x", &[("cluster", "a")], "1")])
                .is_empty()
        );
        // Gone while the watch was down: the re-list says so.
        assert_eq!(s.replace(vec![]), ["a"]);
        assert!(s.observe(&sel(&[("cluster", "a")])).objects.is_empty());
    }

    #[test]
    fn a_kind_the_server_does_not_serve_is_complete_and_empty() {
        let mut s = Store::default();
        s.watch("a", vec![sel(&[])]);
        s.set_served(true);
        s.replace(vec![cm("x", &[], "1")]);
        assert_eq!(s.set_served(false), ["a"]);
        let o = s.observe(&sel(&[]));
        assert!(!o.served && o.synced && o.objects.is_empty());
        assert_eq!(s.size(), (0, 0));
        assert!(s.set_served(false).is_empty());
        s.unwatch("a");
        assert!(s.unwatched());
    }
}
