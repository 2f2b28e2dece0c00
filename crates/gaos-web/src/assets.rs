//! The embedded assets: hand-written ES modules and one stylesheet, committed
//! as they are (no bundler, so what is reviewed is what is served).

/// One embedded file under `/assets/`.
#[derive(Debug, Clone, Copy)]
pub struct Asset {
    /// The file name after `/assets/`.
    pub name: &'static str,
    /// The `Content-Type` it is served with.
    pub content_type: &'static str,
    /// The file's text.
    pub body: &'static str,
}

const JS: &str = "text/javascript; charset=utf-8";

macro_rules! asset {
    ($name:literal, $type:expr) => {
        Asset { name: $name, content_type: $type, body: include_str!(concat!("../assets/", $name)) }
    };
}

/// Every asset the pages load.
pub const ASSETS: &[Asset] = &[
    asset!("app.css", "text/css; charset=utf-8"),
    asset!("api.js", JS),
    asset!("stream.js", JS),
    asset!("render.js", JS),
    asset!("ui.js", JS),
    asset!("picture.js", JS),
    asset!("seats.js", JS),
    asset!("home.js", JS),
    asset!("play.js", JS),
    asset!("watch.js", JS),
    asset!("replay.js", JS),
];

/// The asset named `name`, if there is one.
pub(crate) fn find(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}
