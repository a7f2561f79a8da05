/**
 * Credentials in text an upstream sends towards a host or a log: Hermes's credential pattern plus
 * common cloud and chat tokens, and a URL's `user:password@`, replaced by `[REDACTED]`. Pure.
 */

/**
 * Hermes's `_CREDENTIAL_PATTERN`, plus common cloud and chat tokens. Each alternative must start a
 * word (`disk-full` and `monkey=1` are not credentials; `api_key=…` and `"sk-…"` are).
 */
const CREDENTIAL_PATTERN = new RegExp(
  String.raw`(?<![A-Za-z0-9])(?:` + [
    String.raw`ghp_[A-Za-z0-9_]{1,255}`,
    String.raw`gh[ousr]_[A-Za-z0-9_]{20,255}`,
    String.raw`github_pat_[A-Za-z0-9_]{20,255}`,
    String.raw`sk-[A-Za-z0-9_-](?:\.?[A-Za-z0-9_-]){0,254}`,
    String.raw`Bearer\s+\S+`,
    String.raw`(?:token|key|API_KEY|password|secret)=[^\s&,;"']{1,255}`,
    String.raw`AKIA[0-9A-Z]{16}`,
    String.raw`xox[abprs]-[A-Za-z0-9-]{10,255}`,
  ].join("|") + ")",
  "gi",
);

/** The userinfo of a URL (`scheme://user:password@host`, or a long token alone before `@`). */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)(?:[^\s/?#@:]*:[^\s/?#@]*|[^\s/?#@:]{16,})@/gi;

export function redactCredentials(s: string): string {
  return s.replace(URL_USERINFO, "$1[REDACTED]@").replace(CREDENTIAL_PATTERN, "[REDACTED]");
}
