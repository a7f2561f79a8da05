/**
 * The shapes screening (gate 1) refuses: Hermes's IOC blocklist and patterns (hermes.md section
 * 15) with hermit's additions, each extended only by alternatives; the finding a payload yields
 * and which one is reported (a shape recognized before "cannot read"); and the payloads read as
 * text (cmd, PowerShell, and what base64 tokens hide), with cmd's `^` and PowerShell's backtick
 * escapes removed. Pure.
 */

/** Substrings that refuse an entry outright (hermes.md section 15); compared case-insensitively. */
export const IOC_SUBSTRINGS = [
  "AAAAC3NzaC1lZDI1NTE5AAAAICBoh1oDC4DnsO1m5mJ4yfEKrQebaFh",
  "hermes-0day",
  "60.165.167.",
  "118.182.244.156",
  "61.178.123.196",
] as const;

/** Hermes's `_EGRESS_PATTERN`, plus PowerShell aliases and .NET clients, Windows download tools, telnet, /dev/udp. */
export const EGRESS_PATTERN =
  /(?<![\w.-])(?:curl|wget|nc|ncat|socat|telnet|iwr|irm|bitsadmin)(?![\w.-])|\/dev\/(?:tcp|udp)\/|\bInvoke-WebRequest\b|\bInvoke-RestMethod\b|\bStart-BitsTransfer\b|\b(?:System\.)?Net\.(?:WebClient|Http\.HttpClient|Sockets\.TcpClient)\b|\bcertutil\b.*-urlcache|\bopenssl\s+s_client\b/i;
/** Hermes's `_EXFIL_HINT_PATTERN`: only adds words to the reason. */
export const EXFIL_HINT_PATTERN = /\.env\b|--data-binary|--data-raw|\b-X\s+POST\b|\bPOST\b|<\s*[^\s]+/;
/** Hermes's `_PERSISTENCE_PATTERN`, plus the other login files, preload, autostart and scheduled tasks. */
export const PERSISTENCE_PATTERN =
  /authorized_keys|\.ssh\/|\/etc\/ssh\b|\/etc\/pam\.d\b|pam_[\w-]+\.so|\/etc\/sudoers|\/etc\/cron|crontab\b|\/etc\/rc\.local|\/etc\/systemd|\.bashrc\b|\.bash_profile\b|\.profile\b|\.zshrc\b|\.zprofile\b|\/etc\/profile\b|\/etc\/ld\.so\.preload|\.config\/autostart|\/Library\/Launch(?:Agents|Daemons)|\\CurrentVersion\\Run|\bschtasks\b|\$PROFILE\b/i;

/** `opaque`: a shell payload runs what screening cannot read (a command built out of its sight). */
export type Shape = "egress" | "persistence" | "opaque";
/** Why an entry is refused: an IOC anywhere, or a shape of its shell payload. */
export type RefusalShape = "ioc" | Shape;
export interface Finding {
  shape: Shape;
  /** What matched: `curl`, `/dev/tcp/`, `.bashrc`, …; for `opaque`, what cannot be read and why. */
  what: string;
  /** Found only after decoding base64. */
  encoded: boolean;
}

/** A shape screening recognized settles the verdict; "cannot read" is reported only without one. */
const rank = (f?: Finding) => (!f ? 0 : f.shape === "opaque" ? 1 : 2);
export const settled = (f?: Finding) => rank(f) === 2;
export const worse = (a?: Finding, b?: Finding) => (rank(b) > rank(a) ? b : a);
export const opaque = (what: string, encoded: boolean): Finding => ({ shape: "opaque", what, encoded });
/** What a command name written as a glob is matched against. */
export const EGRESS_TOOLS = ["curl", "wget", "nc", "ncat", "socat", "telnet"];

/** Why a shell's payload (`script`) is refused, for `shell` (its name and the wrappers around it). */
export function findingReason(shell: string, f: Finding, script: readonly string[]): string {
  const note = f.encoded ? " (base64-encoded)" : "";
  if (f.shape === "opaque") return `${shell} runs what screening cannot read: ${f.what}${note}`;
  if (f.shape === "persistence") {
    return `${shell} payload writes to ${f.what}${note} (the hermes-0day backdoor shape)`;
  }
  const exfil = EXFIL_HINT_PATTERN.test(script.join(" ")) ? " and exfiltration-shaped arguments" : "";
  return `${shell} payload has network egress ('${f.what}')${note}${exfil}`;
}

/** Shells whose payload is not POSIX shell (cmd, PowerShell): searched as text, as Hermes does. */
export const TEXT_SHELLS = /^(?:cmd|powershell|pwsh)(?:\.exe)?$/;
/** cmd and PowerShell payloads: the shapes anywhere in the text, then in its base64 tokens. */
export function textFinding(text: string): Finding | undefined {
  for (const [t, encoded] of [[text, false], [decodeBase64Tokens(text), true]] as const) {
    const egress = EGRESS_PATTERN.exec(t);
    if (egress) return { shape: "egress", what: egress[0], encoded };
    const persist = PERSISTENCE_PATTERN.exec(t);
    if (persist) return { shape: "persistence", what: persist[0], encoded };
  }
  return undefined;
}

/** Text hidden in base64 tokens of a payload (UTF-8 or UTF-16LE, as PowerShell encodes it). */
export function decodeBase64Tokens(script: string): string {
  const out: string[] = [];
  for (const m of script.matchAll(/[A-Za-z0-9+/]{16,}={0,2}/g)) {
    let bytes: Uint8Array;
    try {
      bytes = Uint8Array.from(
        atob(m[0].length % 4 ? m[0].slice(0, m[0].length - (m[0].length % 4)) : m[0]),
        (c) => c.charCodeAt(0),
      );
    } catch {
      continue;
    }
    for (const enc of ["utf-8", "utf-16le"]) {
      const text = new TextDecoder(enc).decode(bytes);
      if (/^[\t\n\r\x20-\x7e]+$/.test(text)) out.push(text);
    }
  }
  return out.join("\n");
}

/** cmd's `^` and PowerShell's backtick escape letters; an empty pair of quotes joins words. */
export function unescapeText(shell: string, text: string): string {
  const joined = text.replace(/""|''/g, "");
  return shell.startsWith("cmd") ? joined.replace(/\^(.)/g, "$1") : joined.replace(/`([A-Za-z])/g, "$1");
}
