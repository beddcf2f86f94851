//! The page a browser backend loads for a run: the subject's prelude, source
//! and epilogue as classic `<script src>` scripts in one global (each keeps
//! its own line numbers), then an inline script that tells the backend that
//! every script has run.

use std::path::{Path, PathBuf};

/// `file://` URL of an absolute path (bytes outside `A-Za-z0-9-._~/`
/// percent-encoded), as Chromium and Firefox write it.
pub(crate) fn file_url(path: &Path) -> String {
    let mut out = String::from("file://");
    for &b in path.to_string_lossy().as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The page that runs `files` in order as classic scripts, then the inline
/// script `end` (the backend's end-of-program signal, trusted text).
pub(crate) fn page_html(files: &[&PathBuf], end: &str) -> String {
    let mut html = String::from("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"></head><body>\n");
    for f in files {
        // file_url leaves no `"`, `<` or `&` unescaped.
        html.push_str(&format!("<script src=\"{}\"></script>\n", file_url(f)));
    }
    html.push_str(&format!("<script>{end}</script>\n</body></html>\n"));
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_percent_encode_everything_but_unreserved_bytes() {
        assert_eq!(
            file_url(Path::new("/tmp/a b/\"x\"<&é.js")),
            "file:///tmp/a%20b/%22x%22%3C%26%C3%A9.js"
        );
    }
}
