//! The `topospread` command.

fn main() {}
