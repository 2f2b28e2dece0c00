//! A headless Chromium for browser tests, driven over W3C WebDriver.
//!
//! WebDriver is JSON over HTTP, so this speaks it over `std::net` instead of
//! a WebDriver crate: no new dependency tree, and the same bounded,
//! synchronous calls as every other end-to-end test. (chromedriver answers
//! `Connection: close` yet keeps the socket open, so a reply is read by its
//! `Content-Length`, not to the end of the stream.) [`Browser::start`] runs Debian's `chromedriver` on a free
//! port and opens one headless Chromium session; dropping it ends both.
//!
//! Needs `chromium` and `chromium-driver` (`scripts/test` installs them when
//! missing and root). A missing browser is a failure that says so, never a
//! skip. `GAOS_CHROMIUM` and `GAOS_CHROMEDRIVER` override the paths. Every
//! wait is bounded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

/// How long chromedriver may take to answer `/status`.
const DRIVER_START: Duration = Duration::from_secs(30);
/// The W3C key of an element reference.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// An element reference of the current page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element(String);

/// One headless Chromium behind chromedriver, closed on drop.
pub struct Browser {
    driver: Child,
    port: u16,
    session: String,
}

fn program(env: &str, default: &str) -> PathBuf {
    std::env::var_os(env).map(PathBuf::from).unwrap_or_else(|| PathBuf::from(default))
}

/// One HTTP/1.1 request to chromedriver; answers (status, JSON body).
fn request(port: u16, method: &str, path: &str, body: Option<Value>) -> std::io::Result<(u16, Value)> {
    let bad = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidData, what);
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| bad(format!("status line {line:?}")))?;
    let mut length = None;
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let length = length.ok_or_else(|| bad("chromedriver answered without Content-Length".into()))?;
    let mut bytes = vec![0; length];
    reader.read_exact(&mut bytes)?;
    let value = serde_json::from_slice(&bytes).map_err(|e| bad(format!("not JSON: {e}")))?;
    Ok((status, value))
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port for chromedriver");
    listener.local_addr().expect("local address").port()
}

impl Browser {
    /// Start chromedriver and a headless Chromium (window 1280×900).
    pub fn start() -> Browser {
        let chromium = program("GAOS_CHROMIUM", "/usr/bin/chromium");
        let driver_path = program("GAOS_CHROMEDRIVER", "/usr/bin/chromedriver");
        for (path, package) in [(&chromium, "chromium"), (&driver_path, "chromium-driver")] {
            assert!(
                Path::new(path).exists(),
                "{} is missing: browser tests need Debian's {package} (apt-get install chromium chromium-driver; \
                 scripts/test installs them), or set GAOS_CHROMIUM / GAOS_CHROMEDRIVER",
                path.display()
            );
        }
        let port = free_port();
        let driver = Command::new(&driver_path)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", driver_path.display()));
        let started = Instant::now();
        loop {
            let ready =
                request(port, "GET", "/status", None).ok().is_some_and(|(_, v)| v["value"]["ready"] == json!(true));
            if ready {
                break;
            }
            assert!(started.elapsed() < DRIVER_START, "chromedriver did not become ready within {DRIVER_START:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut browser = Browser { driver, port, session: String::new() };
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium.to_string_lossy(),
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1280,900", "--no-first-run", "--disable-extensions", "--lang=en-US"],
            },
            "timeouts": {"pageLoad": 15000, "script": 10000, "implicit": 0},
        }}});
        let answer = browser.call("POST", "/session", Some(capabilities));
        browser.session = answer["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("chromedriver did not open a session: {answer}"))
            .to_owned();
        browser
    }

    /// One WebDriver command; answers its `value`, panicking on an error.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.try_call(method, path, body).unwrap_or_else(|e| panic!("WebDriver {method} {path}: {e}"))
    }

    fn try_call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        let (status, value) = request(self.port, method, path, body).map_err(|e| e.to_string())?;
        if !(200..300).contains(&status) {
            return Err(format!("HTTP {status}: {}", value["value"]));
        }
        Ok(value["value"].clone())
    }

    fn session_path(&self, rest: &str) -> String {
        format!("/session/{}{rest}", self.session)
    }

    /// Load `url` and wait until the document has loaded.
    pub fn goto(&self, url: &str) {
        self.call("POST", &self.session_path("/url"), Some(json!({"url": url})));
    }

    /// The current URL (fragment included).
    pub fn url(&self) -> String {
        self.call("GET", &self.session_path("/url"), None).as_str().unwrap_or_default().to_owned()
    }

    /// Run `script` (a function body; `arguments` holds `args`) and answer its value.
    pub fn execute(&self, script: &str, args: Vec<Value>) -> Value {
        self.call("POST", &self.session_path("/execute/sync"), Some(json!({"script": script, "args": args})))
    }

    /// The first element matching `css` now, if any.
    pub fn find(&self, css: &str) -> Option<Element> {
        let body = json!({"using": "css selector", "value": css});
        let found = self.try_call("POST", &self.session_path("/elements"), Some(body)).ok()?;
        found.as_array()?.first()?.get(ELEMENT_KEY)?.as_str().map(|id| Element(id.to_owned()))
    }

    /// Every element matching `css` now.
    pub fn find_all(&self, css: &str) -> Vec<Element> {
        let body = json!({"using": "css selector", "value": css});
        let found = self.call("POST", &self.session_path("/elements"), Some(body));
        found
            .as_array()
            .map(|a| a.iter().filter_map(|e| e[ELEMENT_KEY].as_str().map(|id| Element(id.to_owned()))).collect())
            .unwrap_or_default()
    }

    /// Wait (at most `limit`) for an element matching `css`.
    #[track_caller]
    pub fn wait_for(&self, css: &str, limit: Duration) -> Element {
        let started = Instant::now();
        loop {
            if let Some(el) = self.find(css) {
                return el;
            }
            if started.elapsed() > limit {
                panic!("no element {css:?} within {limit:?}; page text: {}", self.page_text());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Wait (at most `limit`) until `condition` (a JS expression) is truthy.
    #[track_caller]
    pub fn wait_until(&self, condition: &str, limit: Duration) -> Duration {
        let started = Instant::now();
        let script = format!("return !!({condition});");
        loop {
            if self.execute(&script, vec![]) == json!(true) {
                return started.elapsed();
            }
            if started.elapsed() > limit {
                panic!("{condition} did not hold within {limit:?}; page text: {}", self.page_text());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Look inside the frame `element` (an `iframe`): finds, texts and
    /// scripts then see its document, until [`Browser::leave_frame`].
    pub fn enter_frame(&self, element: &Element) {
        let mut reference = serde_json::Map::new();
        reference.insert(ELEMENT_KEY.into(), json!(element.0));
        self.call("POST", &self.session_path("/frame"), Some(json!({"id": reference})));
    }

    /// Back to the page's own document after [`Browser::enter_frame`].
    pub fn leave_frame(&self) {
        self.call("POST", &self.session_path("/frame"), Some(json!({"id": null})));
    }

    /// Click an element.
    pub fn click(&self, element: &Element) {
        self.call("POST", &self.session_path(&format!("/element/{}/click", element.0)), Some(json!({})));
    }

    /// Click the first element matching `css`, waiting (at most `limit`)
    /// for one. A page that re-renders on its stream (the play page fetches
    /// the tick again on every event) may replace the element between
    /// finding and clicking it; then the new one is found and clicked, as a
    /// person would click the button now on screen.
    #[track_caller]
    pub fn click_on(&self, css: &str, limit: Duration) {
        let started = Instant::now();
        loop {
            let element = self.wait_for(css, limit.saturating_sub(started.elapsed()));
            let path = self.session_path(&format!("/element/{}/click", element.0));
            match self.try_call("POST", &path, Some(json!({}))) {
                Ok(_) => return,
                Err(e) if e.contains("stale element reference") && started.elapsed() < limit => {}
                Err(e) => panic!("clicking {css:?}: {e}"),
            }
        }
    }

    /// Type `text` into an element.
    pub fn type_text(&self, element: &Element, text: &str) {
        self.call("POST", &self.session_path(&format!("/element/{}/value", element.0)), Some(json!({"text": text})));
    }

    /// Press and release `key` (one character, or a WebDriver key code) on
    /// whatever has the focus, as a person typing would.
    pub fn press_key(&self, key: &str) {
        let actions = json!({"actions": [{"type": "key", "id": "keyboard", "actions": [
            {"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]}]});
        self.call("POST", &self.session_path("/actions"), Some(actions));
    }

    /// An element's rendered text.
    pub fn text(&self, element: &Element) -> String {
        self.call("GET", &self.session_path(&format!("/element/{}/text", element.0)), None)
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// An element's attribute or property, if set.
    pub fn attribute(&self, element: &Element, name: &str) -> Option<String> {
        self.call("GET", &self.session_path(&format!("/element/{}/attribute/{name}", element.0)), None)
            .as_str()
            .map(str::to_owned)
    }

    /// The page's visible text (for failure messages).
    pub fn page_text(&self) -> String {
        self.try_call(
            "POST",
            &self.session_path("/execute/sync"),
            Some(json!({"script": "return document.body ? document.body.innerText : ''", "args": []})),
        )
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
    }

    /// Save a PNG screenshot of the viewport to `path`.
    pub fn screenshot(&self, path: &Path) {
        let data = self.call("GET", &self.session_path("/screenshot"), None);
        let png = base64::engine::general_purpose::STANDARD
            .decode(data.as_str().unwrap_or_default())
            .expect("the screenshot is base64");
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        }
        std::fs::write(path, png).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self.try_call("DELETE", &self.session_path(""), None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
