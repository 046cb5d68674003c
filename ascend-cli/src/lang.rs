//! The language of the tools' messages: English, or Simplified Chinese when the locale asks for it.
//!
//! One rule for every bundled tool (`ascend-doctor`, `ascend-smi`, `kubectl ascend`): the `--lang` flag wins; without
//! it the first of `LC_ALL`, `LC_MESSAGES` and `LANG` that is set and not empty decides, the order POSIX gives them
//! for messages. `zh_CN.UTF-8`, `zh_CN`, `zh-CN`, `zh_CN@...` and `zh` are Chinese; anything else (`C`, `POSIX`,
//! `en_US.UTF-8`, `zh_TW` ...) is English, since the tools have no other translation. A `--lang` value outside
//! [`Lang::ACCEPTED`] is an error that names the accepted values. Column headers, identifiers, paths and commands stay
//! as they are in every language, as `npu-smi`'s do.
//!
//! ```
//! use ascend_cli::lang::Lang;
//!
//! let env = |name: &str| (name == "LANG").then(|| "zh_CN.UTF-8".to_owned());
//! assert_eq!(Lang::select(None, env), Ok(Lang::ZhCn));
//! assert_eq!(Lang::select(Some("en"), env), Ok(Lang::En));
//! assert!(Lang::select(Some("fr"), env).is_err());
//! ```

use std::fmt;
use std::str::FromStr;

/// The language messages are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Lang {
    /// English, the default and the language of every stable identifier.
    #[default]
    En,
    /// Simplified Chinese (`zh-CN`).
    ZhCn,
}

/// A `--lang` value that names no language the tools speak.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown language {value:?}: accepted values are {}", Lang::ACCEPTED.join(", "))]
pub struct UnknownLang {
    /// The value given.
    pub value: String,
}

/// The locale variables that choose the language of messages, in the order POSIX consults them.
pub const LOCALE_VARIABLES: [&str; 3] = ["LC_ALL", "LC_MESSAGES", "LANG"];

impl Lang {
    /// The values `--lang` accepts (case does not matter, `_` may stand for `-`).
    pub const ACCEPTED: [&'static str; 4] = ["en", "zh-CN", "zh_CN", "zh"];

    /// Every language, English first.
    pub const ALL: [Lang; 2] = [Lang::En, Lang::ZhCn];

    /// The BCP 47 tag: `en` or `zh-CN` (the `lang` field of the tools' JSON).
    pub const fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::ZhCn => "zh-CN",
        }
    }

    /// The language a locale name asks for: `zh_CN.UTF-8`, `zh_CN`, `zh-CN`, `zh_CN@...` and `zh` are Chinese, any
    /// other name English.
    pub fn from_locale(locale: &str) -> Lang {
        // language[_territory][.codeset][@modifier]
        let name = locale.split(['.', '@']).next().unwrap_or_default().replace('-', "_");
        if name.eq_ignore_ascii_case("zh") || name.eq_ignore_ascii_case("zh_cn") {
            Lang::ZhCn
        } else {
            Lang::En
        }
    }

    /// The language of the locale variables read through `var`: the first of [`LOCALE_VARIABLES`] that is set and
    /// not empty decides; none set is English.
    pub fn from_locale_vars(var: impl Fn(&str) -> Option<String>) -> Lang {
        LOCALE_VARIABLES
            .iter()
            .filter_map(|name| var(name))
            .find(|value| !value.is_empty())
            .map_or(Lang::En, |value| Lang::from_locale(&value))
    }

    /// The language of this process's environment ([`Lang::from_locale_vars`] over `std::env::var`).
    pub fn from_env() -> Lang {
        Lang::from_locale_vars(|name| std::env::var(name).ok())
    }

    /// The whole rule: the `--lang` value when given, else the locale variables read through `var`.
    ///
    /// # Errors
    /// [`UnknownLang`] for a `--lang` value outside [`Lang::ACCEPTED`].
    pub fn select(flag: Option<&str>, var: impl Fn(&str) -> Option<String>) -> Result<Lang, UnknownLang> {
        match flag {
            Some(value) => value.parse(),
            None => Ok(Lang::from_locale_vars(var)),
        }
    }

    /// Picks this language's text of an English / Chinese pair.
    pub fn pick<T>(self, en: T, zh_cn: T) -> T {
        match self {
            Lang::En => en,
            Lang::ZhCn => zh_cn,
        }
    }
}

impl FromStr for Lang {
    type Err = UnknownLang;

    fn from_str(value: &str) -> Result<Lang, UnknownLang> {
        let name = value.trim().replace('_', "-");
        if name.eq_ignore_ascii_case("en") {
            Ok(Lang::En)
        } else if name.eq_ignore_ascii_case("zh-CN") || name.eq_ignore_ascii_case("zh") {
            Ok(Lang::ZhCn)
        } else {
            Err(UnknownLang { value: value.to_owned() })
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tag())
    }
}

/// The `--lang` flag, to `#[command(flatten)]` into a parser; [`LangArgs::lang`] applies the rule.
#[derive(Debug, Clone, PartialEq, Eq, Default, clap::Args)]
pub struct LangArgs {
    /// Language of messages: en or zh-CN (default: LC_ALL, LC_MESSAGES or LANG; zh_CN.* is Chinese).
    #[arg(long = "lang", value_name = "LANG", value_parser = parse_lang)]
    pub lang: Option<Lang>,
}

impl LangArgs {
    /// The flag's language, else the environment's.
    pub fn lang(&self) -> Lang {
        self.lang.unwrap_or_else(Lang::from_env)
    }
}

/// `--lang`'s value parser: [`Lang::from_str`], for clap's `value_parser`.
///
/// # Errors
/// [`UnknownLang`] for a value outside [`Lang::ACCEPTED`].
pub fn parse_lang(value: &str) -> Result<Lang, UnknownLang> {
    value.parse()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(set: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| set.iter().find(|(key, _)| *key == name).map(|(_, value)| (*value).to_owned())
    }

    #[test]
    fn locale_names() {
        for chinese in ["zh_CN.UTF-8", "zh_CN", "zh-CN", "zh", "zh_CN.GB18030", "zh_CN@pinyin", "ZH_cn.utf8"] {
            assert_eq!(Lang::from_locale(chinese), Lang::ZhCn, "{chinese}");
        }
        for english in ["C", "POSIX", "C.UTF-8", "en_US.UTF-8", "", "zh_TW.UTF-8", "zhx", "de_DE"] {
            assert_eq!(Lang::from_locale(english), Lang::En, "{english}");
        }
    }

    #[test]
    fn precedence_flag_then_lc_all_then_lc_messages_then_lang() {
        let all = [("LC_ALL", "en_US.UTF-8"), ("LC_MESSAGES", "zh_CN.UTF-8"), ("LANG", "zh_CN.UTF-8")];
        assert_eq!(Lang::select(None, vars(&all)), Ok(Lang::En));
        assert_eq!(Lang::select(Some("zh-CN"), vars(&all)), Ok(Lang::ZhCn));
        let messages = [("LC_ALL", ""), ("LC_MESSAGES", "zh_CN.UTF-8"), ("LANG", "en_US.UTF-8")];
        assert_eq!(Lang::select(None, vars(&messages)), Ok(Lang::ZhCn));
        let lang_only = [("LANG", "zh_CN.UTF-8")];
        assert_eq!(Lang::select(None, vars(&lang_only)), Ok(Lang::ZhCn));
        assert_eq!(Lang::select(Some("en"), vars(&lang_only)), Ok(Lang::En));
        let lc_all = [("LC_ALL", "zh_CN"), ("LANG", "C")];
        assert_eq!(Lang::select(None, vars(&lc_all)), Ok(Lang::ZhCn));
        assert_eq!(Lang::select(None, vars(&[])), Ok(Lang::En));
    }

    #[test]
    fn flag_values() {
        for (value, lang) in [("en", Lang::En), ("EN", Lang::En), ("zh-CN", Lang::ZhCn), ("zh_cn", Lang::ZhCn)] {
            assert_eq!(value.parse::<Lang>(), Ok(lang), "{value}");
        }
        assert_eq!("zh".parse::<Lang>(), Ok(Lang::ZhCn));
        let error = "fr".parse::<Lang>().expect_err("fr is not spoken");
        assert_eq!(error.to_string(), "unknown language \"fr\": accepted values are en, zh-CN, zh_CN, zh");
        for lang in Lang::ALL {
            assert_eq!(lang.tag().parse::<Lang>(), Ok(lang));
        }
    }

    #[test]
    fn the_flag_parses_through_clap() {
        use clap::Parser;
        #[derive(Parser)]
        struct Args {
            #[command(flatten)]
            lang: LangArgs,
        }
        let args = Args::try_parse_from(["tool", "--lang", "zh-CN"]).expect("parses");
        assert_eq!(args.lang.lang(), Lang::ZhCn);
        let error = Args::try_parse_from(["tool", "--lang", "fr"]).err().expect("refused").to_string();
        assert!(error.contains("accepted values are en, zh-CN"), "{error}");
    }
}
