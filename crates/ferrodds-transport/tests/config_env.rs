//! `FERRODDS_CONFIG`. One test in its own process, since it changes the environment.

use ferrodds_transport::{ConfigError, TransportConfig, CONFIG_ENV_VAR};

#[test]
fn config_file_named_by_the_environment() {
    assert_eq!(CONFIG_ENV_VAR, "FERRODDS_CONFIG");
    let dir = std::env::temp_dir();
    let good = dir.join(format!(
        "ferrodds-transport-env-{}.toml",
        std::process::id()
    ));
    std::fs::write(&good, "[domain]\nid = 121\n").unwrap();

    std::env::remove_var(CONFIG_ENV_VAR);
    assert_eq!(
        TransportConfig::from_env().unwrap(),
        TransportConfig::default()
    );
    std::env::set_var(CONFIG_ENV_VAR, "");
    assert_eq!(
        TransportConfig::from_env().unwrap(),
        TransportConfig::default()
    );

    std::env::set_var(CONFIG_ENV_VAR, &good);
    assert_eq!(TransportConfig::from_env().unwrap().domain_id(), 121);

    std::fs::write(&good, "[domain]\nid = \"x\"\n").unwrap();
    let err = TransportConfig::from_env().unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "configuration file `{}` (named by FERRODDS_CONFIG), line 2: key `domain.id`: \
             invalid type: string \"x\", expected u32",
            good.display()
        )
    );

    let missing = dir.join("ferrodds-transport-no-such-file.toml");
    std::env::set_var(CONFIG_ENV_VAR, &missing);
    let err = TransportConfig::from_env().unwrap_err();
    assert!(matches!(err, ConfigError::Read { .. }), "{err:?}");
    assert!(
        err.to_string().starts_with(&format!(
            "cannot read configuration file `{}` (named by FERRODDS_CONFIG): ",
            missing.display()
        )),
        "{err}"
    );

    std::env::remove_var(CONFIG_ENV_VAR);
    std::fs::remove_file(good).unwrap();
}
