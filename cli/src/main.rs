//! The `alluvium` command-line tool (see the `alluvium_cli` library for the commands).

fn main() -> std::process::ExitCode {
    alluvium_cli::main_with(alluvium_cli::run)
}
