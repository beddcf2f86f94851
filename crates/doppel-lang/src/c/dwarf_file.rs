//! Reading an object file's DWARF with gimli: the one loader behind the
//! line table ([`super::linetable`]) and the pause-address lookups
//! ([`super::location`]). Section data comes from `object` (compressed
//! `.zdebug`/`SHF_COMPRESSED` sections decompressed); a section the file
//! lacks reads as empty, as gimli expects.

use gimli::RunTimeEndian;
use object::{Object, ObjectSection};
use std::borrow::Cow;
use std::path::Path;

/// The DWARF of `binary` as gimli reads it.
pub(crate) type Dwarf<'d> = gimli::Dwarf<gimli::EndianSlice<'d, RunTimeEndian>>;

/// Reads `binary`, checks that it has the section `required`
/// (`.debug_info`, `.debug_line`: what the caller cannot do without), and
/// calls `f` with the parsed object file and its DWARF.
///
/// Errors: the file cannot be read or is not an object file, `required`
/// is missing (built without `-g`), a section cannot be decompressed, or
/// those of `f`.
pub(crate) fn with_dwarf<T>(
    binary: &Path,
    required: &str,
    f: impl FnOnce(&object::File<'_>, &Dwarf<'_>) -> Result<T, String>,
) -> Result<T, String> {
    let data = std::fs::read(binary).map_err(|e| format!("cannot read {}: {e}", binary.display()))?;
    let file = object::File::parse(&*data).map_err(|e| format!("{} is not an object file: {e}", binary.display()))?;
    if file.section_by_name(required).is_none() {
        return Err(format!(
            "{} has no {required} section (built without -g?)",
            binary.display()
        ));
    }
    let endian = if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let sections = gimli::DwarfSections::load(|id: gimli::SectionId| section(&file, id.name()))?;
    let dwarf = sections.borrow(|s| gimli::EndianSlice::new(s, endian));
    f(&file, &dwarf)
}

/// The (uncompressed) data of section `name` of `file`; empty when the
/// file has no such section. Errors: the section cannot be decompressed.
pub(crate) fn section<'d>(file: &object::File<'d>, name: &str) -> Result<Cow<'d, [u8]>, String> {
    match file.section_by_name(name) {
        Some(s) => s
            .uncompressed_data()
            .map_err(|e| format!("cannot read section {name}: {e}")),
        None => Ok(Cow::Borrowed(&[][..])),
    }
}
