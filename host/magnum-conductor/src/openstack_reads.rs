//! The OpenStack reads of a cluster create, run together.
//!
//! A create validates up to seven OpenStack resources (the flavors' root
//! disks, then the image, the flavors again, the networks, the subnet and
//! the keypair), one after the other in Magnum. They are independent reads,
//! so [`Lookups`] starts them all at once and the validation then reads the
//! answers in Magnum's order: the same error wins, and a resource named
//! twice is asked for once.

use std::collections::{HashMap, HashSet};

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use magnum_domain::RequestContext;
use magnum_domain::models::{Cluster, ClusterTemplate, StringMap};
use python_semantics::python;

use crate::openstack::{
    ErrorKind, Flavor, Image, Keypair, Lookup, LookupError, Network, OpenStackError, Subnet,
};

/// What is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Image,
    Flavor,
    Keypair,
    ExternalNetwork,
    FixedNetwork,
    FixedSubnet,
}

/// One OpenStack read.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub kind: Kind,
    pub ident: String,
}

impl Key {
    pub(crate) fn new(kind: Kind, ident: &str) -> Key {
        Key {
            kind,
            ident: ident.to_string(),
        }
    }
}

#[derive(Clone, Debug)]
enum Answer {
    Image(Image),
    Flavor(Flavor),
    Keypair(Keypair),
    Network(Network),
    Subnet(Subnet),
}

type Read<'a> = BoxFuture<'a, (Key, Result<Answer, LookupError>)>;

/// A [`Lookup`] that answers each distinct read once, within one request:
/// the first ask (or [`Lookups::prefetch`]) starts it, and every read in
/// flight makes progress while an answer is awaited.
pub(crate) struct Lookups<'a> {
    lookup: &'a dyn Lookup,
    ctx: &'a RequestContext,
    started: HashSet<Key>,
    pending: FuturesUnordered<Read<'a>>,
    done: HashMap<Key, Result<Answer, LookupError>>,
}

impl<'a> Lookups<'a> {
    /// Reads through `lookup` as the caller of `ctx`.
    pub(crate) fn new(lookup: &'a dyn Lookup, ctx: &'a RequestContext) -> Lookups<'a> {
        Lookups {
            lookup,
            ctx,
            started: HashSet::new(),
            pending: FuturesUnordered::new(),
            done: HashMap::new(),
        }
    }

    /// Starts every read of `keys` (each at most once); they run while an
    /// answer is awaited.
    pub(crate) fn prefetch(&mut self, keys: &[Key]) {
        for k in keys {
            self.start(k);
        }
    }

    fn start(&mut self, k: &Key) {
        if !self.started.insert(k.clone()) {
            return;
        }
        let (lookup, ctx, key) = (self.lookup, self.ctx, k.clone());
        self.pending.push(Box::pin(async move {
            let ident = key.ident.as_str();
            let r = match key.kind {
                Kind::Image => lookup.image(ctx, ident).await.map(Answer::Image),
                Kind::Flavor => lookup.flavor(ctx, ident).await.map(Answer::Flavor),
                Kind::Keypair => lookup.keypair(ctx, ident).await.map(Answer::Keypair),
                Kind::ExternalNetwork => lookup
                    .external_network(ctx, ident)
                    .await
                    .map(Answer::Network),
                Kind::FixedNetwork => lookup.fixed_network(ctx, ident).await.map(Answer::Network),
                Kind::FixedSubnet => lookup.fixed_subnet(ctx, ident).await.map(Answer::Subnet),
            };
            (key, r)
        }));
    }

    async fn get(&mut self, k: Key) -> Result<Answer, LookupError> {
        self.start(&k);
        loop {
            if let Some(r) = self.done.get(&k) {
                return r.clone();
            }
            match self.pending.next().await {
                Some((key, r)) => {
                    self.done.insert(key, r);
                }
                // Unreachable: the read of `k` was started and is not done.
                None => return Err(mismatch()),
            }
        }
    }

    /// The image `ident`.
    pub(crate) async fn image(&mut self, ident: &str) -> Result<Image, LookupError> {
        match self.get(Key::new(Kind::Image, ident)).await? {
            Answer::Image(i) => Ok(i),
            _ => Err(mismatch()),
        }
    }

    /// The flavor `ident`.
    pub(crate) async fn flavor(&mut self, ident: &str) -> Result<Flavor, LookupError> {
        match self.get(Key::new(Kind::Flavor, ident)).await? {
            Answer::Flavor(f) => Ok(f),
            _ => Err(mismatch()),
        }
    }

    /// The caller's keypair `name`.
    pub(crate) async fn keypair(&mut self, name: &str) -> Result<Keypair, LookupError> {
        match self.get(Key::new(Kind::Keypair, name)).await? {
            Answer::Keypair(k) => Ok(k),
            _ => Err(mismatch()),
        }
    }

    /// The external network `ident`.
    pub(crate) async fn external_network(&mut self, ident: &str) -> Result<Network, LookupError> {
        match self.get(Key::new(Kind::ExternalNetwork, ident)).await? {
            Answer::Network(n) => Ok(n),
            _ => Err(mismatch()),
        }
    }

    /// The network `ident`.
    pub(crate) async fn fixed_network(&mut self, ident: &str) -> Result<Network, LookupError> {
        match self.get(Key::new(Kind::FixedNetwork, ident)).await? {
            Answer::Network(n) => Ok(n),
            _ => Err(mismatch()),
        }
    }

    /// The subnet `ident`.
    pub(crate) async fn fixed_subnet(&mut self, ident: &str) -> Result<Subnet, LookupError> {
        match self.get(Key::new(Kind::FixedSubnet, ident)).await? {
            Answer::Subnet(s) => Ok(s),
            _ => Err(mismatch()),
        }
    }
}

/// A read that lost its answer, or a key answered with another kind of
/// resource: impossible, since every started read is awaited and the kind
/// is part of the key.
fn mismatch() -> LookupError {
    LookupError::Failed(OpenStackError::new(
        "lookup",
        ErrorKind::Invalid("a read lost its answer".into()),
    ))
}

/// The name a flavor check looks up: a null flavor is looked up as
/// "None", as in Magnum.
pub(crate) fn flavor_name(f: &Option<String>) -> &str {
    f.as_deref().unwrap_or("None")
}

/// The cluster's value when set and not empty, else the template's.
pub(crate) fn pick<'v>(own: &'v Option<String>, tmpl: &'v Option<String>) -> Option<&'v str> {
    match own.as_deref() {
        Some(s) if !s.is_empty() => Some(s),
        _ => tmpl.as_deref(),
    }
}

/// The `boot_volume_size` label as Python's `int()` reads it (0 when
/// absent); `Err` carries `int()`'s message.
pub(crate) fn boot_volume_size(labels: &Option<StringMap>) -> Result<i64, String> {
    match labels.as_ref().and_then(|l| l.get("boot_volume_size")) {
        None => Ok(0),
        Some(v) => match python::parse_int(v) {
            Ok(n) => Ok(n
                .to_i64()
                .unwrap_or(if n.is_negative() { i64::MIN } else { i64::MAX })),
            Err(e) => Err(e.message().to_string()),
        },
    }
}

/// The reads of a cluster create's validation (the root-disk checks, then
/// the resources), to be started together.
pub(crate) fn create_lookups(t: &ClusterTemplate, cl: &Cluster) -> Vec<Key> {
    let mut keys = Vec::new();
    if !matches!(boot_volume_size(&cl.labels), Ok(n) if n > 0) {
        for f in [&cl.flavor_id, &cl.master_flavor_id] {
            keys.push(Key::new(Kind::Flavor, flavor_name(f)));
        }
    }
    let mut add = |kind, ident: Option<&str>| {
        if let Some(i) = ident {
            keys.push(Key::new(kind, i));
        }
    };
    add(Kind::Image, t.image_id.as_deref());
    add(Kind::Flavor, pick(&cl.flavor_id, &t.flavor_id));
    add(
        Kind::Flavor,
        pick(&cl.master_flavor_id, &t.master_flavor_id),
    );
    add(Kind::ExternalNetwork, t.external_network_id.as_deref());
    add(
        Kind::FixedNetwork,
        pick(&cl.fixed_network, &t.fixed_network),
    );
    add(Kind::FixedSubnet, pick(&cl.fixed_subnet, &t.fixed_subnet));
    if let Some(k) = cl.keypair.as_deref().filter(|k| !k.is_empty()) {
        keys.push(Key::new(Kind::Keypair, k));
    }
    keys
}
