// SPDX-License-Identifier: GPL-2.0-only
//
// libbpf's open options (--kconfig, --btf-custom-path, --pin-root-path,
// --bpf-token-path, --relaxed-maps), made once per run and used by every
// load of it. libbpf copies what it keeps at each open, so the strings
// need only outlive the opens; they are owned here. (scx_utils' own
// conversion leaks its strings: once per reload, that is a whole kernel
// config file lost at every CPU hotplug restart.)

use std::ffi::CString;
use std::mem;

use anyhow::{Context, Result};
use libbpf_rs::libbpf_sys::{bpf_object_open_opts, size_t};
use scx_utils::libbpf_clap_opts::LibbpfOpts;

pub struct OpenOpts {
    /// What `opts` points into; a CString's buffer does not move with it.
    _strings: Vec<CString>,
    opts: Option<bpf_object_open_opts>,
}

impl OpenOpts {
    /// The options as given; a --kconfig file that cannot be read, or any
    /// value with a NUL byte in it, is refused.
    pub fn new(o: &LibbpfOpts) -> Result<Self> {
        let mut strings = Vec::new();
        let mut keep = |flag: &str, s: String| -> Result<*const libc::c_char> {
            let c = CString::new(s).with_context(|| format!("{flag} holds a NUL byte"))?;
            let ptr = c.as_ptr();
            strings.push(c);
            Ok(ptr)
        };
        // SAFETY: an all-zero bpf_object_open_opts is libbpf's "nothing
        // set": every field is a number, a bool or a nullable pointer.
        let mut opts: bpf_object_open_opts = unsafe { mem::zeroed() };
        opts.sz = mem::size_of::<bpf_object_open_opts>() as size_t;
        let mut any = false;
        if let Some(relaxed) = o.relaxed_maps {
            opts.relaxed_maps = relaxed;
            any = true;
        }
        if let Some(path) = &o.kconfig {
            let text = std::fs::read_to_string(path).with_context(|| {
                format!("cannot read the --kconfig file {path} (give a kernel config, such as /boot/config-$(uname -r))")
            })?;
            opts.kconfig = keep("the --kconfig file", text)?;
            any = true;
        }
        if let Some(path) = &o.btf_custom_path {
            opts.btf_custom_path = keep("--btf-custom-path", path.clone())?;
            any = true;
        }
        if let Some(path) = &o.pin_root_path {
            opts.pin_root_path = keep("--pin-root-path", path.clone())?;
            any = true;
        }
        if let Some(path) = &o.bpf_token_path {
            opts.bpf_token_path = keep("--bpf-token-path", path.clone())?;
            any = true;
        }
        Ok(Self {
            _strings: strings,
            opts: any.then_some(opts),
        })
    }

    /// For one open: None when nothing was given (libbpf's defaults).
    pub fn get(&self) -> Option<bpf_object_open_opts> {
        self.opts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn nothing_given_is_libbpfs_defaults() {
        assert!(OpenOpts::new(&LibbpfOpts::default())
            .unwrap()
            .get()
            .is_none());
    }

    #[test]
    fn the_kconfig_text_is_kept_and_stays_valid_across_opens() {
        let dir = std::env::temp_dir().join(format!("soryu-kconfig-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config");
        std::fs::write(&path, "CONFIG_HZ=250\n").unwrap();
        let o = LibbpfOpts {
            kconfig: Some(path.display().to_string()),
            btf_custom_path: Some("/x/btf".into()),
            ..Default::default()
        };
        let open = OpenOpts::new(&o).unwrap();
        // moved, as main() moves it into its loop: the pointers still hold
        let open = std::hint::black_box(open);
        for _ in 0..2 {
            let got = open.get().unwrap();
            // SAFETY: pointers into the CStrings `open` owns
            let k = unsafe { CStr::from_ptr(got.kconfig) };
            let b = unsafe { CStr::from_ptr(got.btf_custom_path) };
            assert_eq!(k.to_str().unwrap(), "CONFIG_HZ=250\n");
            assert_eq!(b.to_str().unwrap(), "/x/btf");
            assert!(got.pin_root_path.is_null() && got.bpf_token_path.is_null());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unreadable_kconfig_is_refused_in_one_line() {
        let o = LibbpfOpts {
            kconfig: Some("/nonexistent/config".into()),
            ..Default::default()
        };
        let e = format!("{:#}", OpenOpts::new(&o).err().unwrap());
        assert!(
            e.starts_with("cannot read the --kconfig file /nonexistent/config"),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
    }
}
