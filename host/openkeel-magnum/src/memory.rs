//! The process's allocator. A request allocates and frees many small
//! objects (rows, strings, the response body); mimalloc does that with less
//! CPU than the system allocator. Compiling the driver components at
//! start-up allocates tens of megabytes that are all freed once the code is
//! built: [`release_free_memory`] gives them back to the system.
//!
//! Transparent huge pages are off for the process ([`configure`]): mimalloc
//! asks the kernel for them on its arenas (`madvise(MADV_HUGEPAGE)`), and
//! then the first byte written to a 2 MiB range makes all of it resident.
//! An idle `api` held 61 MiB with them and 45 MiB without
//! (docs/performance.md, "Memory"); the service's allocations are small and
//! short-lived, so it does not need the fewer TLB misses they buy.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Sets up the process's memory before anything else runs: no transparent
/// huge pages, for the allocator's arenas or anything else.
pub fn configure() {
    // SAFETY: `mi_option_set` only stores the option's value; `allow_thp`
    // is read when the allocator next maps memory.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ALLOW_THP, 0) };
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes one integer argument and changes
    // only how later page faults of this process are served; a kernel
    // without it answers EINVAL, which leaves the default.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// `mi_option_allow_thp` of the mimalloc 3 that libmimalloc-sys builds (its
/// `mimalloc.h`; the Rust binding names the options up to
/// `max_segment_reclaim` only). A test holds the count of options.
const MI_OPTION_ALLOW_THP: libmimalloc_sys::mi_option_t = 43;

/// Returns the memory the allocator holds but nothing uses to the system.
pub fn release_free_memory() {
    // SAFETY: `mi_collect` has no preconditions; it only walks the
    // allocator's own heaps and releases their unused pages.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

#[cfg(test)]
mod tests {
    /// The option numbers are those of the mimalloc 3 built here, which
    /// has 47 options; another mimalloc may number them otherwise, and this
    /// fails first.
    #[test]
    fn allow_thp_is_the_option_of_this_mimalloc() {
        assert_eq!(libmimalloc_sys::_mi_option_last, 47);
        // SAFETY: reading an option has no preconditions.
        let on = unsafe { libmimalloc_sys::mi_option_is_enabled(super::MI_OPTION_ALLOW_THP) };
        super::configure();
        // SAFETY: as above.
        let after = unsafe { libmimalloc_sys::mi_option_is_enabled(super::MI_OPTION_ALLOW_THP) };
        assert!(!after, "allow_thp is still on (it was {on})");
    }
}
