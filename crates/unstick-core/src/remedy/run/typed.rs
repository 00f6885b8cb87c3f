//! The typed confirmation of an irreversible step: which part of a name the operator types.

/// Names longer than this are confirmed by typing their last [`TYPED_TAIL`] characters.
pub const TYPED_WHOLE_MAX: usize = 16;
/// How many trailing characters of a long name are typed.
pub const TYPED_TAIL: usize = 8;

/// The part of a confirmation name the operator types to prove attention: the whole name up to
/// [`TYPED_WHOLE_MAX`] characters, else its last [`TYPED_TAIL`] (a 68-character VolumeAttachment
/// name ends in a hash that differs between attachments). Never auto-completed.
pub fn typed_part(name: &str) -> &str {
    let n = name.chars().count();
    if n <= TYPED_WHOLE_MAX {
        return name;
    }
    let start = name.char_indices().nth(n - TYPED_TAIL).map(|(i, _)| i).unwrap_or(0);
    &name[start..]
}

/// True when `typed` confirms `name`: the whole name or its [`typed_part`].
pub fn typed_matches(name: &str, typed: Option<&str>) -> bool {
    typed.map(str::trim).is_some_and(|t| t == name || t == typed_part(name))
}
