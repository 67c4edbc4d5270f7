fn main() -> std::process::ExitCode {
    openkeel_magnum::cli::main()
}
