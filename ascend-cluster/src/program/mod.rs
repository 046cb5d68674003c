//! The `kubectl-ascend` command line (feature `cli`): kubectl's flags, the five commands, tables with colours on a
//! terminal, `-o wide|json|yaml`, and the exit codes of [`exit`].
//!
//! [`run`] does one command on a client and returns what to print and the exit code, so tests call it with a client
//! of the fake API server; [`main`] is the whole program (the `kubectl-ascend` binary is one call to it).

mod args;
mod connect;
mod render;
mod style;
mod table;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

pub use args::{Args, Command, Output};
pub use connect::client_for;
pub use style::Style;

use crate::error::{Error, Result};
use crate::objects::Scope;
use crate::{capacity_report, doctor_report, faults_report, nodes_report, pods_report, CapacityQuery};

/// The exit codes (docs/kubectl-ascend.md).
pub mod exit {
    /// The command ran; nothing it looks for was found (no current fault; a node fits; the doctor passed).
    pub const OK: u8 = 0;
    /// The command ran and found what it looks for: `faults` found a chip unhealthy now, `capacity` found no node
    /// that fits, `doctor`'s checks failed (its own code 1).
    pub const FOUND: u8 = 1;
    /// A bad command line (clap's code), or `doctor`'s own code 2.
    pub const USAGE: u8 = 2;
    /// The cluster could not be read: no kubeconfig or context, an API error, no answer in time.
    pub const CLUSTER: u8 = 3;
    /// `doctor` could not run: no daemon pod on the node, or the exec failed.
    pub const DOCTOR_UNAVAILABLE: u8 = 4;
}

/// What a command prints and how it exits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// For standard output.
    pub stdout: String,
    /// For standard error.
    pub stderr: String,
    /// The exit code ([`exit`]).
    pub exit_code: u8,
}

/// Runs the command of `args` on `client`. `default_namespace` is the context's namespace, used by `pods` without
/// `-n` or `-A` (as kubectl does).
///
/// # Errors
/// The library's errors: the cluster could not be read, or the doctor could not run.
pub async fn run(client: &kube::Client, args: &Args, default_namespace: &str, style: Style) -> Result<Outcome> {
    let output = args.output;
    let (stdout, exit_code) = match &args.command {
        Command::Nodes => (render::nodes(&nodes_report(client).await?, output, style)?, exit::OK),
        Command::Pods => {
            let scope = match (&args.namespace, args.all_namespaces) {
                (_, true) => Scope::AllNamespaces,
                (Some(namespace), false) => Scope::Namespace(namespace.clone()),
                (None, false) => Scope::Namespace(default_namespace.to_owned()),
            };
            let report = pods_report(client, &scope).await?;
            (render::pods(&report, output, style, scope == Scope::AllNamespaces)?, exit::OK)
        }
        Command::Faults => {
            let report = faults_report(client).await?;
            let code = if report.current.is_empty() { exit::OK } else { exit::FOUND };
            (render::faults(&report, output, style)?, code)
        }
        Command::Capacity { chips, same_hccs, chip_type } => {
            let query = CapacityQuery { chips: *chips, same_hccs: *same_hccs, chip_type: chip_type.clone() };
            let report = capacity_report(client, &query).await?;
            let code = if report.fits.is_empty() { exit::FOUND } else { exit::OK };
            (render::capacity(&report, output, style)?, code)
        }
        Command::Doctor { node, args: doctor_args } => {
            let doctor_args = with_lang(doctor_args, args.lang);
            let run = doctor_report(client, node, &doctor_args).await?;
            let code = run.exit_code.and_then(|code| u8::try_from(code).ok()).unwrap_or(exit::DOCTOR_UNAVAILABLE);
            let stderr = doctor_stderr(&run);
            let stdout = render::doctor(&run, output)?;
            return Ok(Outcome { stdout, stderr, exit_code: code });
        }
    };
    Ok(Outcome { stdout, stderr: String::new(), exit_code })
}

/// The doctor's standard error, and a line of ours when its exec ended without an exit status (the command then
/// exits [`exit::DOCTOR_UNAVAILABLE`], which would otherwise come with no word of why).
fn doctor_stderr(run: &crate::DoctorRun) -> String {
    let mut stderr = run.stderr.clone();
    if run.exit_code.is_none() {
        stderr.push_str(&format!(
            "kubectl-ascend: the doctor's exec in pod {}/{} ended without an exit status (the pod may have stopped \
             meanwhile): run it again\n",
            run.daemon.namespace, run.daemon.pod
        ));
    }
    stderr
}

/// The exit code for an error of [`run`].
pub fn exit_code_of(error: &Error) -> u8 {
    match error {
        Error::NoDaemonPod { .. } | Error::Exec { .. } => exit::DOCTOR_UNAVAILABLE,
        _ => exit::CLUSTER,
    }
}

/// The error's message and those of its causes that it does not already hold (kube-rs nests the same words several
/// levels deep; the root cause, such as "Connection refused", is often only at the bottom).
pub fn message_with_causes(error: &Error) -> String {
    let mut message = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(current) = cause {
        let text = current.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        cause = current.source();
    }
    message
}

/// [`message_with_causes`] in `lang`: in Chinese the sentence that says what failed is translated, the causes
/// (kube-rs's, the API server's) and every name, path and command stay as they are.
pub fn localized_message(error: &Error, lang: ascend_cli::Lang) -> String {
    let english = message_with_causes(error);
    if lang == ascend_cli::Lang::En {
        return english;
    }
    let own = error.to_string();
    let causes = english.strip_prefix(&own).unwrap_or_default();
    let sentence = match error {
        Error::Kube(source) => format!("访问 API Server 失败：{source}"),
        Error::Kubeconfig { context, source } => {
            let context = context.as_deref().map(|c| format!("（上下文 {c:?}）")).unwrap_or_default();
            format!("加载 kubeconfig{context}失败：{source}")
        }
        Error::NoDaemonPod { node, labels } => format!(
            "节点 {node:?} 上没有运行中的 ascend-device-plugin 或 ascend-dra-driver Pod（标签 app.kubernetes.io/name \
             取值为 ({labels}) 的 Pod）；请确认节点名是否正确，以及 DaemonSet 是否已调度到该节点"
        ),
        Error::Exec { namespace, pod, container, command, reason } => {
            format!("在 pods/{namespace}/{pod}（容器 {container}）中执行 {command:?} 失败：{reason}")
        }
        Error::Encode { format, reason } => format!("将报告写为 {format} 失败：{reason}"),
    };
    format!("{sentence}{causes}")
}

/// The doctor's arguments with `--lang zh-CN` first when Chinese is asked for and the arguments do not choose a
/// language themselves: the doctor in the pod does not see the operator's locale. English adds nothing, so that an
/// older doctor without `--lang` still runs.
fn with_lang(doctor_args: &[String], lang: Option<ascend_cli::Lang>) -> Vec<String> {
    let chooses = doctor_args.iter().any(|arg| arg == "--lang" || arg.starts_with("--lang="));
    match lang {
        Some(lang) if lang != ascend_cli::Lang::En && !chooses => {
            ["--lang".to_owned(), lang.tag().to_owned()].into_iter().chain(doctor_args.iter().cloned()).collect()
        }
        _ => doctor_args.to_vec(),
    }
}

/// The prefix of an error line in `lang`: kubectl's `error: `.
pub fn error_prefix(lang: ascend_cli::Lang) -> &'static str {
    lang.pick("error: ", "错误：")
}

/// The whole program: parses the command line, connects as kubectl would, runs the command, prints, exits.
pub async fn main() -> ExitCode {
    let mut args = <Args as clap::Parser>::parse();
    args.lang = Some(args.lang.unwrap_or_else(ascend_cli::Lang::from_env));
    let stdout = std::io::stdout();
    let colour = stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    let style = Style { colour, now: k8s_openapi::jiff::Timestamp::now() };
    let outcome = match client_for(&args).await {
        Ok((client, namespace)) => run(&client, &args, &namespace, style).await,
        Err(error) => Err(error),
    };
    match outcome {
        Ok(outcome) => {
            let _ = stdout.lock().write_all(outcome.stdout.as_bytes());
            let _ = std::io::stderr().lock().write_all(outcome.stderr.as_bytes());
            ExitCode::from(outcome.exit_code)
        }
        Err(error) => {
            let lang = args.lang.unwrap_or_default();
            eprintln!("{}{}", error_prefix(lang), localized_message(&error, lang));
            ExitCode::from(exit_code_of(&error))
        }
    }
}

#[cfg(test)]
mod tests {
    use ascend_cli::Lang;

    use super::*;

    #[test]
    fn a_doctor_exec_without_an_exit_status_says_so() {
        let daemon = crate::DaemonPod { namespace: "ns".into(), pod: "plugin-x".into(), container: "c".into() };
        let mut run = crate::DoctorRun {
            node: "n".into(),
            daemon,
            stdout: String::new(),
            stderr: "its own\n".into(),
            exit_code: Some(1),
        };
        assert_eq!(doctor_stderr(&run), "its own\n");
        run.exit_code = None;
        let stderr = doctor_stderr(&run);
        assert!(stderr.starts_with("its own\n") && stderr.contains("ns/plugin-x ended without an exit status"));
    }

    fn errors() -> Vec<Error> {
        vec![
            Error::Kubeconfig { context: Some("«ctx»".to_owned()), source: "«no such file»".into() },
            Error::NoDaemonPod { node: "«node-1»".to_owned(), labels: "«ascend-device-plugin»".to_owned() },
            Error::Exec {
                namespace: "«kube-system»".to_owned(),
                pod: "«plugin-x»".to_owned(),
                container: "«plugin»".to_owned(),
                command: "«ascend-doctor»".to_owned(),
                reason: "«refused»".to_owned(),
            },
            Error::Encode { format: "YAML", reason: "«bad»".to_owned() },
        ]
    }

    fn marked(text: &str) -> Vec<&str> {
        text.split('«').skip(1).filter_map(|part| part.split('»').next()).collect()
    }

    #[test]
    fn every_error_reads_in_chinese_with_its_names_unchanged() {
        for error in errors() {
            let english = localized_message(&error, Lang::En);
            let chinese = localized_message(&error, Lang::ZhCn);
            assert_eq!(english, message_with_causes(&error));
            assert!(chinese.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)), "{chinese}");
            let (mut en, mut zh) = (marked(&english), marked(&chinese));
            en.sort_unstable();
            en.dedup();
            zh.sort_unstable();
            zh.dedup();
            assert_eq!(en, zh, "{english} / {chinese}");
        }
        assert_eq!((error_prefix(Lang::En), error_prefix(Lang::ZhCn)), ("error: ", "错误："));
    }

    #[test]
    fn the_lang_flag_is_global_and_checked() {
        let args =
            <Args as clap::Parser>::try_parse_from(["kubectl-ascend", "faults", "--lang", "zh-CN"]).expect("args");
        assert_eq!(args.lang, Some(Lang::ZhCn));
        let refused = <Args as clap::Parser>::try_parse_from(["kubectl-ascend", "nodes", "--lang", "de"]);
        let message = refused.expect_err("refused").to_string();
        assert!(message.contains("accepted values are en, zh-CN"), "{message}");
    }

    #[test]
    fn chinese_reaches_the_doctor_in_the_pod() {
        let args = |list: &[&str]| list.iter().map(|arg| (*arg).to_owned()).collect::<Vec<_>>();
        assert_eq!(with_lang(&args(&["--json"]), Some(Lang::ZhCn)), args(&["--lang", "zh-CN", "--json"]));
        assert_eq!(with_lang(&args(&["--json"]), Some(Lang::En)), args(&["--json"]));
        assert_eq!(with_lang(&args(&["--json"]), None), args(&["--json"]));
        assert_eq!(with_lang(&args(&["--lang=en"]), Some(Lang::ZhCn)), args(&["--lang=en"]));
    }
}
