//! The HTTP application: the API's options, the authenticator (Keystone or
//! none) and its listen address.

use super::*;

/// What the HTTP layer takes from the options.
pub fn api_options(options: &Options) -> ApiOptions {
    let c = &options.cors;
    let disable_file = &options.healthcheck.disable_by_file_path;
    ApiOptions {
        max_limit: options.api.max_limit,
        cors: CorsOptions {
            allowed_origin: c.allowed_origin.clone(),
            allow_credentials: c.allow_credentials,
            expose_headers: c.expose_headers.clone(),
            max_age: c.max_age.max(0).unsigned_abs(),
            allow_methods: c.allow_methods.clone(),
            allow_headers: c.allow_headers.clone(),
        },
        proxy_headers: options.oslo_middleware.enable_proxy_headers_parsing,
        healthcheck_disable_file: (options
            .healthcheck
            .backends
            .iter()
            .any(|b| b == "disable_by_file")
            && !disable_file.is_empty())
        .then(|| PathBuf::from(disable_file)),
        unversioned_at_route_minimum: options.api.unversioned_at_route_minimum,
        ..ApiOptions::default()
    }
}

/// The authenticator `[DEFAULT]/auth_strategy` asks for. With Keystone, it
/// checks that the service obtains its own token, so that a wrong URL or
/// password fails at start.
pub async fn authenticator(
    options: &Options,
    enforcer: Arc<Enforcer>,
) -> Result<Arc<dyn api::Authenticator>, StartError> {
    let is_admin: auth::IsAdmin = Arc::new(move |ctx| policy::is_admin(&enforcer, ctx));
    if options.default.auth_strategy == AuthStrategy::NoAuth {
        return Ok(Arc::new(auth::Authenticator::NoAuth(auth::NoAuth::new(
            is_admin,
        ))));
    }
    let keystone =
        auth::Keystone::new(keystone_settings(options), is_admin).map_err(StartError::new)?;
    keystone.check().await.map_err(StartError::new)?;
    Ok(Arc::new(auth::Authenticator::Keystone(keystone)))
}

/// `[keystone_authtoken]` as the authenticator's settings.
pub fn keystone_settings(options: &Options) -> auth::KeystoneSettings {
    let k = &options.keystone_authtoken;
    let c = &k.credentials;
    auth::KeystoneSettings {
        auth_url: c.auth_url.clone().unwrap_or_default(),
        www_authenticate_uri: k.www_authenticate_uri.clone(),
        username: c.username.clone().unwrap_or_default(),
        password: c.password_text(),
        project_id: c.project_id.clone(),
        project_name: c.project_name.clone(),
        user_domain_id: c.user_domain_id.clone(),
        user_domain_name: c.user_domain_name.clone(),
        project_domain_id: c.project_domain_id.clone(),
        project_domain_name: c.project_domain_name.clone(),
        cafile: k.cafile.as_ref().map(PathBuf::from),
        insecure: k.insecure,
        token_cache_time: k.token_cache_time,
        timeout: k
            .http_connect_timeout
            .filter(|t| *t > 0)
            .map(|t| Duration::from_secs(t.unsigned_abs())),
        delay_auth_decision: k.delay_auth_decision,
    }
}

/// The HTTP application with every handler of this build.
pub fn application(
    options: &Options,
    auth: Arc<dyn api::Authenticator>,
    conductor: Conductor,
    enforcer: Arc<Enforcer>,
) -> axum::Router {
    let handlers = api::handlers(&api::Services {
        conductor,
        enforcer,
    });
    Api::new(api_options(options), auth, handlers).into_router()
}

/// The listen address of `[api]`.
pub fn listen_address(options: &Options) -> Result<SocketAddr, StartError> {
    let host: IpAddr = options.api.host.parse().map_err(|_| {
        StartError::new(format!(
            "[api]/host: {:?} is not an IP address",
            options.api.host
        ))
    })?;
    Ok(SocketAddr::new(host, options.api.port))
}
