//! The lookups against the double: results, Magnum's errors, and the
//! requests made (filtered, with the caller's token).

use std::sync::Arc;

use openkeel_magnum_osfake::{Fault, Service};

use super::clients::is_uuid_like;
use super::testing::*;
use super::{Flavor, Keypair, Lookup, Network, Static, Subnet};

/// The conductor holds either implementation behind the trait.
#[tokio::test]
async fn clients_and_static_are_lookups() {
    let lookups: [Arc<dyn Lookup>; 2] = [
        Arc::new(Static::new(false)),
        Arc::new(clients(session(Default::default()), Default::default())),
    ];
    let mut answers = Vec::new();
    for l in lookups {
        answers.push(l.keypair(&ctx(), "default").await.map(|k| k.name));
    }
    // Static knows the keypair; the clients have no catalog to find Nova.
    assert_eq!(answers[0], Ok("default".to_owned()));
    want_client_error(
        answers.remove(1),
        403,
        "AuthorizationFailure",
        "nova connection failed. unexpected client error occurred: The service catalog is empty.",
    );
}

fn fault(service: Service, status: u16) -> Fault {
    Fault {
        service: Some(service),
        status,
        ..Default::default()
    }
}

// Go: TestImage/found by id with one GET.
#[tokio::test]
async fn image_found_by_id_with_one_get() {
    let h = Harness::new().await;
    let img = match h.clients.image(&h.ctx, IMAGE_UBUNTU).await {
        Ok(i) => i,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(
        (
            img.id.as_str(),
            img.name.as_str(),
            img.os_distro.as_deref(),
            img.magnum_driver.as_deref()
        ),
        (
            IMAGE_UBUNTU,
            "ubuntu-jammy",
            Some("ubuntu"),
            Some("k8s_capi_helm_v1")
        )
    );
    assert_eq!(
        img.properties.get("kube_version").map(String::as_str),
        Some("v1.30.2")
    );
    h.check_calls(&[&format!("GET image /v2/images/{IMAGE_UBUNTU}")]);
}

// Go: TestImage/found by name with a name filter.
#[tokio::test]
async fn image_found_by_name_with_a_name_filter() {
    let h = Harness::new().await;
    let img = h.clients.image(&h.ctx, "ubuntu-jammy").await;
    assert!(
        matches!(&img, Ok(i) if i.id == IMAGE_UBUNTU && i.os_distro.as_deref() == Some("ubuntu")),
        "{img:?}"
    );
    h.check_calls(&["GET image /v2/images?name=ubuntu-jammy"]);
}

// Go: TestImage/hidden image by id.
#[tokio::test]
async fn image_hidden_by_id() {
    let h = Harness::new().await;
    let img = h.clients.image(&h.ctx, IMAGE_HIDDEN).await;
    assert!(
        matches!(&img, Ok(i) if i.os_distro.as_deref() == Some("flatcar")),
        "{img:?}"
    );
}

// Go: TestImage/id wins over a name equal to it.
#[tokio::test]
async fn image_id_wins_over_a_name_equal_to_it() {
    // openstacksdk returns the direct GET's image and never lists.
    let h = Harness::new().await;
    let img = h.clients.image(&h.ctx, IMAGE_UBUNTU).await;
    assert!(matches!(&img, Ok(i) if i.id == IMAGE_UBUNTU), "{img:?}");
    h.check_calls(&[&format!("GET image /v2/images/{IMAGE_UBUNTU}")]);
}

// Go: TestImage/not found.
#[tokio::test]
async fn image_not_found() {
    let h = Harness::new().await;
    want_client_error(
        h.clients.image(&h.ctx, "nope").await,
        400,
        "ImageNotFound",
        "Image nope could not be found.",
    );
    h.check_calls(&["GET image /v2/images?name=nope"]);
}

// Go: TestImage/missing id.
#[tokio::test]
async fn image_missing_id() {
    let h = Harness::new().await;
    let id = "99999999-9999-4999-8999-999999999999";
    want_client_error(
        h.clients.image(&h.ctx, id).await,
        400,
        "ImageNotFound",
        &format!("Image {id} could not be found."),
    );
    h.check_calls(&[
        &format!("GET image /v2/images/{id}"),
        &format!("GET image /v2/images?name={id}"),
    ]);
}

// Go: TestImage/several images with the name.
#[tokio::test]
async fn image_several_with_the_name() {
    let h = Harness::new().await;
    want_client_error(
        h.clients.image(&h.ctx, "dup").await,
        409,
        "Conflict",
        "Multiple images exist with same name 'dup'. Please use the image ID instead.",
    );
}

// Go: TestImage/duplicates on different pages.
#[tokio::test]
async fn image_duplicates_on_different_pages() {
    let h = Harness::new().await;
    h.fake.set_page_size(1);
    want_client_error(
        h.clients.image(&h.ctx, "dup").await,
        409,
        "Conflict",
        "Multiple images exist with same name 'dup'. Please use the image ID instead.",
    );
    h.check_calls(&[
        "GET image /v2/images?name=dup",
        &format!("GET image /v2/images?marker={IMAGE_DUP_A}&name=dup"),
    ]);
}

// Go: TestImage/list forbidden.
#[tokio::test]
async fn image_list_forbidden() {
    let h = Harness::new().await;
    h.fake.inject(fault(Service::Image, 403));
    want_client_error(
        h.clients.image(&h.ctx, "ubuntu-jammy").await,
        403,
        "ImageNotAuthorized",
        "Not authorized for image ubuntu-jammy.",
    );
}

// Go: TestImage/glance failure is a 500.
#[tokio::test]
async fn image_glance_failure_is_a_500() {
    let h = Harness::new().await;
    h.fake.inject(fault(Service::Image, 500));
    let e = want_failed(h.clients.image(&h.ctx, IMAGE_UBUNTU).await);
    assert_eq!(e.status(), Some(500), "{e}");
}

// Go: TestImage/name with reserved characters.
#[tokio::test]
async fn image_name_with_reserved_characters() {
    let h = Harness::new().await;
    let name = "a b/c?d&name=ubuntu-jammy";
    want_client_error(
        h.clients.image(&h.ctx, name).await,
        400,
        "ImageNotFound",
        &format!("Image {name} could not be found."),
    );
    let calls = h.fake.calls();
    assert!(
        calls.len() == 1 && calls[0].query.get("name") == Some(name) && calls[0].query.len() == 1,
        "requests = {:?}",
        h.paths()
    );
}

// Go: TestValidateImage.
#[tokio::test]
async fn validate_image_needs_os_distro() {
    let h = Harness::new().await;
    assert!(
        h.clients
            .validate_image(&h.ctx, "ubuntu-jammy")
            .await
            .is_ok()
    );
    want_client_error(
        h.clients.validate_image(&h.ctx, "plain").await,
        400,
        "OSDistroFieldNotFound",
        "Image plain doesn't contain os_distro field.",
    );
    let missing = format!("{}9", &IMAGE_DUP_A[..35]);
    want_client_error(
        h.clients.validate_image(&h.ctx, &missing).await,
        400,
        "ImageNotFound",
        &format!("Image {missing} could not be found."),
    );
    // The name of an image can be another image's id: the id wins.
    let by_id = h.clients.validate_image(&h.ctx, IMAGE_NO_DISTRO).await;
    want_client_error(
        by_id,
        400,
        "OSDistroFieldNotFound",
        &format!("Image {IMAGE_NO_DISTRO} doesn't contain os_distro field."),
    );
}

// Go: TestUUIDLike.
#[test]
fn uuid_like_as_python_reads_it() {
    for (s, want) in [
        (IMAGE_UBUNTU, true),
        ("11111111111141118111111111111111", true),
        ("{11111111-1111-4111-8111-111111111111}", true),
        ("urn:uuid:11111111-1111-4111-8111-111111111111", true),
        ("11111111-1111-4111-8111-11111111111G", false),
        ("ubuntu", false),
        ("", false),
    ] {
        assert_eq!(is_uuid_like(s), want, "{s:?}");
    }
}

// Go: TestFlavor/found by id with one GET.
#[tokio::test]
async fn flavor_found_by_id_with_one_get() {
    let h = Harness::new().await;
    assert_eq!(
        h.clients.flavor(&h.ctx, "2").await,
        Ok(Flavor {
            id: "2".into(),
            name: "m1.medium".into(),
            vcpus: 2,
            ram: 4096,
            disk: 40
        })
    );
    h.check_calls(&["GET compute /v2.1/flavors/2"]);
}

// Go: TestFlavor/found by name.
#[tokio::test]
async fn flavor_found_by_name() {
    let h = Harness::new().await;
    let f = h.clients.flavor(&h.ctx, "m1.large").await;
    assert!(matches!(&f, Ok(f) if f.id == "3" && f.disk == 80), "{f:?}");
    h.check_calls(&[
        "GET compute /v2.1/flavors/m1.large",
        "GET compute /v2.1/flavors/detail",
    ]);
}

// Go: TestFlavor/listing stops at the first match.
#[tokio::test]
async fn flavor_listing_stops_at_the_first_match() {
    let h = Harness::new().await;
    h.fake.set_page_size(2);
    assert!(h.clients.flavor(&h.ctx, "m1.large").await.is_ok());
    h.check_calls(&[
        "GET compute /v2.1/flavors/m1.large",
        "GET compute /v2.1/flavors/detail",
        "GET compute /v2.1/flavors/detail?marker=2",
    ]);
}

// Go: TestFlavor/zero root disk is reported.
#[tokio::test]
async fn flavor_zero_root_disk_is_reported() {
    let h = Harness::new().await;
    let f = h.clients.flavor(&h.ctx, "boot.from.volume").await;
    assert!(matches!(&f, Ok(f) if f.disk == 0 && f.id == "bfv"), "{f:?}");
}

// Go: TestFlavor/name with a slash.
#[tokio::test]
async fn flavor_name_with_a_slash() {
    let h = Harness::new().await;
    let f = h.clients.flavor(&h.ctx, "odd name/with slash").await;
    assert!(matches!(&f, Ok(f) if f.id == "c0ffee"), "{f:?}");
    // The name went as one escaped segment, not as a path.
    assert_eq!(h.fake.calls()[0].path, "/v2.1/flavors/odd name/with slash");
}

// Go: TestFlavor/the word detail is a name, not a listing.
#[tokio::test]
async fn flavor_the_word_detail_is_a_name() {
    let h = Harness::new().await;
    want_client_error(
        h.clients.flavor(&h.ctx, "detail").await,
        400,
        "FlavorNotFound",
        "Unable to find flavor detail.",
    );
}

// Go: TestFlavor/not found after every page.
#[tokio::test]
async fn flavor_not_found_after_every_page() {
    let h = Harness::new().await;
    h.fake.set_page_size(3);
    want_client_error(
        h.clients.flavor(&h.ctx, "m9.huge").await,
        400,
        "FlavorNotFound",
        "Unable to find flavor m9.huge.",
    );
    h.check_calls(&[
        "GET compute /v2.1/flavors/m9.huge",
        "GET compute /v2.1/flavors/detail",
        "GET compute /v2.1/flavors/detail?marker=3",
    ]);
}

// Go: TestFlavor/nova failure is a 500.
#[tokio::test]
async fn flavor_nova_failure_is_a_500() {
    let h = Harness::new().await;
    h.fake.inject(Fault {
        path: Some("/v2.1/flavors/detail".into()),
        ..fault(Service::Compute, 503)
    });
    let e = want_failed(h.clients.flavor(&h.ctx, "m1.small").await);
    assert_eq!(e.status(), Some(503), "{e}");
}

// Go: TestKeypair/found.
#[tokio::test]
async fn keypair_found() {
    let h = Harness::new().await;
    assert_eq!(
        h.clients.keypair(&h.ctx, "mykey").await,
        Ok(Keypair {
            name: "mykey".into(),
            key_type: "ssh".into(),
            fingerprint: "aa:bb".into()
        })
    );
    h.check_calls(&["GET compute /v2.1/os-keypairs/mykey"]);
}

// Go: TestKeypair/not found is a 404.
#[tokio::test]
async fn keypair_not_found_is_a_404() {
    let h = Harness::new().await;
    want_client_error(
        h.clients.keypair(&h.ctx, "other").await,
        404,
        "KeyPairNotFound",
        "Unable to find keypair other.",
    );
    h.check_calls(&["GET compute /v2.1/os-keypairs/other"]);
}

// Go: TestKeypair/dot names never reach the path.
#[tokio::test]
async fn keypair_dot_names_never_reach_the_path() {
    let h = Harness::new().await;
    want_client_error(
        h.clients.keypair(&h.ctx, "..").await,
        404,
        "KeyPairNotFound",
        "Unable to find keypair ...",
    );
    h.check_calls(&[]);
}

// Go: TestKeypair/nova failure is a 500.
#[tokio::test]
async fn keypair_nova_failure_is_a_500() {
    let h = Harness::new().await;
    h.fake.inject(fault(Service::Compute, 500));
    want_failed(h.clients.keypair(&h.ctx, "mykey").await);
}

// Go: TestExternalNetwork/found by name.
#[tokio::test]
async fn external_network_found_by_name() {
    let h = Harness::new().await;
    assert_eq!(
        h.clients.external_network(&h.ctx, "public").await,
        Ok(Network {
            id: NET_PUBLIC.into(),
            name: "public".into(),
            external: true
        })
    );
    h.check_calls(&["GET network /v2.0/networks?name=public&router%3Aexternal=true"]);
}

// Go: TestExternalNetwork/found by id.
#[tokio::test]
async fn external_network_found_by_id() {
    let h = Harness::new().await;
    let n = h.clients.external_network(&h.ctx, NET_PUBLIC).await;
    assert!(matches!(&n, Ok(n) if n.name == "public"), "{n:?}");
    h.check_calls(&[
        &format!("GET network /v2.0/networks?name={NET_PUBLIC}&router%3Aexternal=true"),
        &format!("GET network /v2.0/networks?id={NET_PUBLIC}&router%3Aexternal=true"),
    ]);
}

// Go: TestExternalNetwork/a private network is not found.
#[tokio::test]
async fn external_network_a_private_one_is_not_found() {
    let h = Harness::new().await;
    want_client_error(
        h.clients.external_network(&h.ctx, "private").await,
        400,
        "ExternalNetworkNotFound",
        "Unable to find external network private.",
    );
}

// Go: TestExternalNetwork/not found.
#[tokio::test]
async fn external_network_not_found() {
    let h = Harness::new().await;
    want_client_error(
        h.clients.external_network(&h.ctx, "nope").await,
        400,
        "ExternalNetworkNotFound",
        "Unable to find external network nope.",
    );
}

// Go: TestExternalNetwork/ambiguous name.
#[tokio::test]
async fn external_network_ambiguous_name() {
    let h = Harness::new().await;
    want_client_error(
        h.clients.external_network(&h.ctx, "ext-dup").await,
        409,
        "Conflict",
        "Multiple external networks exist with same name 'ext-dup'. Please use the external \
         network ID instead.",
    );
}

// Go: TestExternalNetwork/only the external one of two homonyms counts.
#[tokio::test]
async fn external_network_only_the_external_homonym_counts() {
    let h = Harness::new().await;
    let n = h.clients.external_network(&h.ctx, "dup").await;
    assert!(matches!(&n, Ok(n) if n.id == NET_DUP_B), "{n:?}");
}

// Go: TestExternalNetwork/upper-case id is not sent as an id filter.
#[tokio::test]
async fn external_network_upper_case_id_is_not_an_id_filter() {
    let h = Harness::new().await;
    let upper = NET_PUBLIC.to_uppercase();
    want_client_error(
        h.clients.external_network(&h.ctx, &upper).await,
        400,
        "ExternalNetworkNotFound",
        &format!("Unable to find external network {upper}."),
    );
    assert_eq!(h.fake.calls().len(), 1, "requests = {:?}", h.paths());
}

// Go: TestExternalNetwork/neutron failure is a 500.
#[tokio::test]
async fn external_network_neutron_failure_is_a_500() {
    let h = Harness::new().await;
    h.fake.inject(fault(Service::Network, 500));
    want_failed(h.clients.external_network(&h.ctx, "public").await);
}

// Go: TestFixedNetwork/found by name.
#[tokio::test]
async fn fixed_network_found_by_name() {
    let h = Harness::new().await;
    assert_eq!(
        h.clients.fixed_network(&h.ctx, "private").await,
        Ok(Network {
            id: NET_PRIVATE.into(),
            name: "private".into(),
            external: false
        })
    );
    h.check_calls(&["GET network /v2.0/networks?name=private"]);
}

// Go: TestFixedNetwork/external networks count too.
#[tokio::test]
async fn fixed_network_external_networks_count_too() {
    let h = Harness::new().await;
    assert!(h.clients.fixed_network(&h.ctx, "public").await.is_ok());
}

// Go: TestFixedNetwork/found by id.
#[tokio::test]
async fn fixed_network_found_by_id() {
    let h = Harness::new().await;
    let n = h.clients.fixed_network(&h.ctx, NET_PUBLIC).await;
    assert!(matches!(&n, Ok(n) if n.id == NET_PUBLIC), "{n:?}");
    h.check_calls(&[
        &format!("GET network /v2.0/networks?name={NET_PUBLIC}"),
        &format!("GET network /v2.0/networks?id={NET_PUBLIC}"),
    ]);
}

// Go: TestFixedNetwork/an id that is also another network's name is ambiguous.
#[tokio::test]
async fn fixed_network_an_id_that_is_another_name_is_ambiguous() {
    // Magnum counts every network whose name or id equals the value.
    let h = Harness::new().await;
    want_client_error(
        h.clients.fixed_network(&h.ctx, NET_PRIVATE).await,
        409,
        "Conflict",
        &format!(
            "Multiple networks exist with same name '{NET_PRIVATE}'. Please use the network ID \
             instead."
        ),
    );
}

// Go: TestFixedNetwork/ambiguous name.
#[tokio::test]
async fn fixed_network_ambiguous_name() {
    let h = Harness::new().await;
    want_client_error(
        h.clients.fixed_network(&h.ctx, "dup").await,
        409,
        "Conflict",
        "Multiple networks exist with same name 'dup'. Please use the network ID instead.",
    );
}

// Go: TestFixedNetwork/not found.
#[tokio::test]
async fn fixed_network_not_found() {
    let h = Harness::new().await;
    want_client_error(
        h.clients.fixed_network(&h.ctx, "nope").await,
        400,
        "FixedNetworkNotFound",
        "Unable to find fixed network nope.",
    );
}

// Go: TestFixedSubnet/found by name.
#[tokio::test]
async fn fixed_subnet_found_by_name() {
    let h = Harness::new().await;
    assert_eq!(
        h.clients.fixed_subnet(&h.ctx, "private-subnet").await,
        Ok(Subnet {
            id: SUB_PRIVATE.into(),
            name: "private-subnet".into(),
            network_id: NET_PRIVATE.into()
        })
    );
    h.check_calls(&["GET network /v2.0/subnets?name=private-subnet"]);
}

// Go: TestFixedSubnet/found by id.
#[tokio::test]
async fn fixed_subnet_found_by_id() {
    let h = Harness::new().await;
    let s = h.clients.fixed_subnet(&h.ctx, SUB_DUP_A).await;
    assert!(matches!(&s, Ok(s) if s.name == "dup"), "{s:?}");
    h.check_calls(&[
        &format!("GET network /v2.0/subnets?name={SUB_DUP_A}"),
        &format!("GET network /v2.0/subnets?id={SUB_DUP_A}"),
    ]);
}

// Go: TestFixedSubnet/ambiguous name.
#[tokio::test]
async fn fixed_subnet_ambiguous_name() {
    let h = Harness::new().await;
    want_client_error(
        h.clients.fixed_subnet(&h.ctx, "dup").await,
        409,
        "Conflict",
        "Multiple subnets exist with same name 'dup'. Please use the subnet ID instead.",
    );
}

// Go: TestFixedSubnet/not found.
#[tokio::test]
async fn fixed_subnet_not_found() {
    let h = Harness::new().await;
    want_client_error(
        h.clients.fixed_subnet(&h.ctx, "nope").await,
        400,
        "FixedSubnetNotFound",
        "Unable to find fixed subnet nope.",
    );
}

// Go: TestFixedSubnet/a transient failure is a 500, not a miss.
#[tokio::test]
async fn fixed_subnet_a_transient_failure_is_a_500_not_a_miss() {
    let h = Harness::new().await;
    h.fake.inject(Fault {
        times: 1,
        ..fault(Service::Network, 502)
    });
    want_failed(h.clients.fixed_subnet(&h.ctx, "dup").await);
    want_client_error(
        h.clients.fixed_subnet(&h.ctx, "dup").await,
        409,
        "Conflict",
        "Multiple subnets exist with same name 'dup'. Please use the subnet ID instead.",
    );
}

// Go: TestFixedSubnet/pages are followed.
#[tokio::test]
async fn fixed_subnet_pages_are_followed() {
    let h = Harness::new().await;
    h.fake.set_page_size(1);
    want_client_error(
        h.clients.fixed_subnet(&h.ctx, "dup").await,
        409,
        "Conflict",
        "Multiple subnets exist with same name 'dup'. Please use the subnet ID instead.",
    );
    h.check_calls(&[
        "GET network /v2.0/subnets?name=dup",
        &format!("GET network /v2.0/subnets?limit=1&marker={SUB_DUP_A}&name=dup"),
        &format!("GET network /v2.0/subnets?limit=1&marker={SUB_DUP_B}&name=dup"),
    ]);
}
