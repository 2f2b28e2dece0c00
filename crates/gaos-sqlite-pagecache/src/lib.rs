//! SQLite's own page cache, behind a thin layer that spares the host's
//! writer a scan of its whole cache at the end of most commits.
//!
//! # Why
//!
//! When a b-tree balance leaves sibling pages out of page-number order,
//! SQLite swaps their numbers, parking one page for a moment under the
//! number of the lock-byte page (the page holding the byte at 1 GiB, never
//! used for data: 262,145 with 4 KiB pages). Its page cache remembers the
//! largest number it has held since it was last truncated, and every write
//! transaction ends by truncating the cache to the database's size. After a
//! swap the remembered number lies far past the end of the database, so that
//! truncation walks every slot of the cache's hash table (8,192 with the
//! writer's 32 MiB cache, each a cache miss) and finds nothing to drop. On
//! the host under load that was 7 % of all host CPU and a third of the
//! writer thread's (perf, BENCHMARKS.md).
//!
//! # What the layer does
//!
//! It forwards every call to SQLite's default cache unchanged and keeps its
//! own account of which page numbers the cache can hold: the largest number
//! a page was created or renumbered under, and how many pages are parked
//! under the swap number right now. A truncation whose limit lies above both
//! cannot drop anything, so it is not forwarded; every other one is. The
//! account can only err on the side of forwarding: SQLite's cache may drop
//! pages without telling the layer, never add one.
//!
//! SQLite accepts a page cache only before it initializes, which the first
//! connection opened in a process does; [`install`] must run before that and
//! reports when it came too late (the process then keeps SQLite's cache as
//! is: correct, only slower).

use std::ffi::{c_int, c_uint, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rusqlite::ffi;

/// Why the layer could not be installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallError {
    /// SQLite refused the configuration (`SQLITE_MISUSE`, 21, when a
    /// connection was opened in this process before [`install`] ran).
    Refused(c_int),
}

impl std::fmt::Display for InstallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InstallError::Refused(code) => write!(
                f,
                "SQLite refused the page cache layer (code {code}): it accepts one only before its first connection"
            ),
        }
    }
}

impl std::error::Error for InstallError {}

/// Put the layer in front of SQLite's page cache for every connection this
/// process opens from now on. Idempotent: later calls return the first
/// call's outcome.
pub fn install() -> Result<(), InstallError> {
    *OUTCOME.get_or_init(install_once)
}

/// Whether [`install`] succeeded in this process.
pub fn installed() -> bool {
    matches!(OUTCOME.get(), Some(Ok(())))
}

/// The outcome of the first [`install`].
static OUTCOME: OnceLock<Result<(), InstallError>> = OnceLock::new();

/// Truncations the layer has seen since the process started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Truncations {
    /// Forwarded to SQLite's cache (they could drop a page).
    pub forwarded: u64,
    /// Answered by the layer alone (no page could be at or past the limit).
    pub skipped: u64,
}

/// How many cache truncations were forwarded and how many skipped, over all
/// connections of the process (diagnostics and tests).
pub fn truncations() -> Truncations {
    Truncations { forwarded: FORWARDED.load(Ordering::Relaxed), skipped: SKIPPED.load(Ordering::Relaxed) }
}

static FORWARDED: AtomicU64 = AtomicU64::new(0);
static SKIPPED: AtomicU64 = AtomicU64::new(0);

/// SQLite's default page cache methods (what the layer forwards to).
struct Methods(ffi::sqlite3_pcache_methods2);

// SAFETY: the table is a set of C function pointers and an argument pointer
// that SQLite's default cache ignores (null); SQLite itself shares it across
// threads, and it is never written after it is stored.
unsafe impl Send for Methods {}
// SAFETY: as above: read-only after it is stored.
unsafe impl Sync for Methods {}

static INNER: OnceLock<Methods> = OnceLock::new();
/// The layer's own table; SQLite keeps a copy, but it stays alive (and
/// findable) for the life of the process.
static LAYER: OnceLock<Methods> = OnceLock::new();

fn install_once() -> Result<(), InstallError> {
    let mut default = std::mem::MaybeUninit::<ffi::sqlite3_pcache_methods2>::zeroed();
    // SAFETY: SQLITE_CONFIG_GETPCACHE2 takes one pointer to a methods table
    // and fills it; `default` is valid for writes of that type.
    let rc = unsafe { ffi::sqlite3_config(ffi::SQLITE_CONFIG_GETPCACHE2, default.as_mut_ptr()) };
    if rc != ffi::SQLITE_OK {
        return Err(InstallError::Refused(rc));
    }
    // SAFETY: SQLite filled the table (rc is SQLITE_OK); zeroed memory is a
    // valid table too (null pointers and `None` function pointers).
    let default = unsafe { default.assume_init() };
    let inner = INNER.get_or_init(|| Methods(default));
    let layer = LAYER.get_or_init(|| {
        Methods(ffi::sqlite3_pcache_methods2 {
            iVersion: inner.0.iVersion,
            pArg: std::ptr::null_mut(),
            xInit: Some(x_init),
            xShutdown: Some(x_shutdown),
            xCreate: Some(x_create),
            xCachesize: Some(x_cachesize),
            xPagecount: Some(x_pagecount),
            xFetch: Some(x_fetch),
            xUnpin: Some(x_unpin),
            xRekey: Some(x_rekey),
            xTruncate: Some(x_truncate),
            xDestroy: Some(x_destroy),
            xShrink: Some(x_shrink),
        })
    });
    // SAFETY: SQLITE_CONFIG_PCACHE2 takes one pointer to a methods table and
    // copies it; every function in it has the signature SQLite calls.
    let rc =
        unsafe { ffi::sqlite3_config(ffi::SQLITE_CONFIG_PCACHE2, &layer.0 as *const ffi::sqlite3_pcache_methods2) };
    if rc != ffi::SQLITE_OK {
        return Err(InstallError::Refused(rc));
    }
    Ok(())
}

fn inner() -> &'static ffi::sqlite3_pcache_methods2 {
    // The layer's functions are only reachable through the table installed
    // after INNER was stored.
    &INNER.get().expect("the page cache layer runs only after it was installed").0
}

/// The number SQLite's b-tree parks a page under while it swaps two page
/// numbers: the lock-byte page's (`PENDING_BYTE / page size + 1`).
fn swap_key(page_size: c_int) -> c_uint {
    const PENDING_BYTE: c_uint = 0x4000_0000;
    PENDING_BYTE / c_uint::try_from(page_size).unwrap_or(1).max(1) + 1
}

/// One cache: SQLite's, and the layer's account of the numbers it may hold.
struct LayeredCache {
    inner: *mut ffi::sqlite3_pcache,
    swap_key: c_uint,
    /// Every page the cache may hold is numbered at most this, except those
    /// parked under `swap_key`.
    high: AtomicU32,
    /// Pages renumbered to `swap_key` and not renumbered away since.
    parked: AtomicU32,
}

impl LayeredCache {
    /// # Safety
    /// `cache` must be a pointer [`x_create`] returned and [`x_destroy`] has
    /// not freed.
    unsafe fn of<'a>(cache: *mut ffi::sqlite3_pcache) -> &'a LayeredCache {
        // SAFETY: by this function's contract, `cache` came from
        // `Box::into_raw` in `x_create` and is still alive.
        unsafe { &*(cache as *const LayeredCache) }
    }

    /// Whether a truncation to `limit` (drop pages numbered `limit` and
    /// above) could drop a page.
    fn could_drop(&self, limit: c_uint) -> bool {
        limit <= self.high.load(Ordering::Relaxed)
            || (limit <= self.swap_key && self.parked.load(Ordering::Relaxed) > 0)
    }

    /// The account after a forwarded truncation to `limit`.
    fn truncated(&self, limit: c_uint) {
        if limit <= self.high.load(Ordering::Relaxed) {
            self.high.store(limit.saturating_sub(1), Ordering::Relaxed);
        }
        if limit <= self.swap_key {
            self.parked.store(0, Ordering::Relaxed);
        }
    }

    fn renumbered(&self, old: c_uint, new: c_uint) {
        if new == self.swap_key {
            self.parked.fetch_add(1, Ordering::Relaxed);
        } else {
            self.high.fetch_max(new, Ordering::Relaxed);
        }
        if old == self.swap_key {
            // A page created under the swap number (never by SQLite's b-tree)
            // was never counted; `high` already covers it.
            let _ = self.parked.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        }
    }
}

unsafe extern "C" fn x_init(_arg: *mut c_void) -> c_int {
    match inner().xInit {
        // SAFETY: forwarding SQLite's call to the default cache with the
        // argument that cache was configured with.
        Some(init) => unsafe { init(inner().pArg) },
        None => ffi::SQLITE_OK,
    }
}

unsafe extern "C" fn x_shutdown(_arg: *mut c_void) {
    if let Some(shutdown) = inner().xShutdown {
        // SAFETY: as in `x_init`.
        unsafe { shutdown(inner().pArg) }
    }
}

unsafe extern "C" fn x_create(page_size: c_int, extra: c_int, purgeable: c_int) -> *mut ffi::sqlite3_pcache {
    let Some(create) = inner().xCreate else { return std::ptr::null_mut() };
    // SAFETY: forwarding SQLite's call with its own arguments.
    let cache = unsafe { create(page_size, extra, purgeable) };
    if cache.is_null() {
        return cache;
    }
    let layered = LayeredCache {
        inner: cache,
        swap_key: swap_key(page_size),
        high: AtomicU32::new(0),
        parked: AtomicU32::new(0),
    };
    Box::into_raw(Box::new(layered)) as *mut ffi::sqlite3_pcache
}

unsafe extern "C" fn x_cachesize(cache: *mut ffi::sqlite3_pcache, pages: c_int) {
    // SAFETY: SQLite passes a cache this layer created.
    let layered = unsafe { LayeredCache::of(cache) };
    if let Some(cachesize) = inner().xCachesize {
        // SAFETY: forwarding to the default cache with its own handle.
        unsafe { cachesize(layered.inner, pages) }
    }
}

unsafe extern "C" fn x_pagecount(cache: *mut ffi::sqlite3_pcache) -> c_int {
    // SAFETY: SQLite passes a cache this layer created.
    let layered = unsafe { LayeredCache::of(cache) };
    match inner().xPagecount {
        // SAFETY: forwarding to the default cache with its own handle.
        Some(pagecount) => unsafe { pagecount(layered.inner) },
        None => 0,
    }
}

unsafe extern "C" fn x_fetch(
    cache: *mut ffi::sqlite3_pcache,
    key: c_uint,
    create: c_int,
) -> *mut ffi::sqlite3_pcache_page {
    // SAFETY: SQLite passes a cache this layer created.
    let layered = unsafe { LayeredCache::of(cache) };
    if create != 0 {
        // The fetch may create a page under `key` (counted whether or not it
        // did: the account may only be too large).
        layered.high.fetch_max(key, Ordering::Relaxed);
    }
    match inner().xFetch {
        // SAFETY: forwarding to the default cache with its own handle.
        Some(fetch) => unsafe { fetch(layered.inner, key, create) },
        None => std::ptr::null_mut(),
    }
}

unsafe extern "C" fn x_unpin(cache: *mut ffi::sqlite3_pcache, page: *mut ffi::sqlite3_pcache_page, discard: c_int) {
    // SAFETY: SQLite passes a cache this layer created.
    let layered = unsafe { LayeredCache::of(cache) };
    if let Some(unpin) = inner().xUnpin {
        // SAFETY: forwarding to the default cache; `page` came from it.
        unsafe { unpin(layered.inner, page, discard) }
    }
}

unsafe extern "C" fn x_rekey(
    cache: *mut ffi::sqlite3_pcache,
    page: *mut ffi::sqlite3_pcache_page,
    old: c_uint,
    new: c_uint,
) {
    // SAFETY: SQLite passes a cache this layer created.
    let layered = unsafe { LayeredCache::of(cache) };
    layered.renumbered(old, new);
    if let Some(rekey) = inner().xRekey {
        // SAFETY: forwarding to the default cache; `page` came from it.
        unsafe { rekey(layered.inner, page, old, new) }
    }
}

unsafe extern "C" fn x_truncate(cache: *mut ffi::sqlite3_pcache, limit: c_uint) {
    // SAFETY: SQLite passes a cache this layer created.
    let layered = unsafe { LayeredCache::of(cache) };
    if !layered.could_drop(limit) {
        SKIPPED.fetch_add(1, Ordering::Relaxed);
        return;
    }
    FORWARDED.fetch_add(1, Ordering::Relaxed);
    if let Some(truncate) = inner().xTruncate {
        // SAFETY: forwarding to the default cache with its own handle.
        unsafe { truncate(layered.inner, limit) }
    }
    layered.truncated(limit);
}

unsafe extern "C" fn x_destroy(cache: *mut ffi::sqlite3_pcache) {
    // SAFETY: SQLite destroys each cache once, with the pointer `x_create`
    // returned from `Box::into_raw`; nothing uses it afterwards.
    let layered = unsafe { Box::from_raw(cache as *mut LayeredCache) };
    if let Some(destroy) = inner().xDestroy {
        // SAFETY: forwarding to the default cache with its own handle, once.
        unsafe { destroy(layered.inner) }
    }
}

unsafe extern "C" fn x_shrink(cache: *mut ffi::sqlite3_pcache) {
    // SAFETY: SQLite passes a cache this layer created.
    let layered = unsafe { LayeredCache::of(cache) };
    if let Some(shrink) = inner().xShrink {
        // SAFETY: forwarding to the default cache with its own handle.
        unsafe { shrink(layered.inner) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account() -> LayeredCache {
        LayeredCache {
            inner: std::ptr::null_mut(),
            swap_key: swap_key(4096),
            high: AtomicU32::new(0),
            parked: AtomicU32::new(0),
        }
    }

    #[test]
    fn the_swap_number_is_the_lock_byte_page() {
        assert_eq!(swap_key(4096), 262_145);
        assert_eq!(swap_key(1024), 1_048_577);
        assert_eq!(swap_key(65_536), 16_385);
    }

    #[test]
    fn a_swap_that_ends_leaves_nothing_past_the_database() {
        let cache = account();
        cache.high.store(100, Ordering::Relaxed);
        // balance_nonroot: A → swap, B → A, swap → B.
        cache.renumbered(40, cache.swap_key);
        assert!(cache.could_drop(101), "a page is parked under the swap number");
        cache.renumbered(90, 40);
        cache.renumbered(cache.swap_key, 90);
        assert!(!cache.could_drop(101));
        assert!(cache.could_drop(100));
    }

    #[test]
    fn a_forwarded_truncation_lowers_the_account() {
        let cache = account();
        cache.high.store(500, Ordering::Relaxed);
        assert!(cache.could_drop(300));
        cache.truncated(300);
        assert!(!cache.could_drop(300));
        assert!(cache.could_drop(299));
        // Truncating everything (a reset) forgets parked pages too.
        cache.renumbered(10, cache.swap_key);
        cache.truncated(0);
        assert!(!cache.could_drop(1));
    }

    #[test]
    fn a_page_renumbered_upwards_raises_the_account() {
        let cache = account();
        cache.high.store(10, Ordering::Relaxed);
        cache.renumbered(3, 70);
        assert!(cache.could_drop(70));
        assert!(!cache.could_drop(71));
    }
}
