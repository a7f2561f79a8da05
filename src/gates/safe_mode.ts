/**
 * Gate 7, the kill switch: with `HERMIT_SAFE_MODE` set (`1`, `true`, …) hermit loads no upstream
 * server and no command tool. It fails closed: only unset, empty or `0`/`false`/`no`/`off` (white
 * space around ignored) leave it off, so a value it does not know (`Y`, a CRLF env file's `1\r`)
 * turns it on rather than being read as off.
 */
export function safeMode(env: Readonly<Record<string, string | undefined>>): boolean {
  const value = (env.HERMIT_SAFE_MODE ?? "").trim();
  return value !== "" && !/^(0|false|no|off)$/i.test(value);
}

export const SAFE_MODE_NOTICE = "HERMIT_SAFE_MODE is set: no upstream server and no command tool is loaded";
