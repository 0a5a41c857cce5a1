//! One module per subcommand.

pub(crate) mod test;
pub(crate) mod validate;
