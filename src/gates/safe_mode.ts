/**
 * Gate 7, the kill switch: with `HERMIT_SAFE_MODE=1` (or true/yes/on) hermit loads no upstream
 * server and no command tool.
 */
export function safeMode(env: Readonly<Record<string, string | undefined>>): boolean {
  return /^(1|true|yes|on)$/i.test(env.HERMIT_SAFE_MODE ?? "");
}

export const SAFE_MODE_NOTICE = "HERMIT_SAFE_MODE is set: no upstream server and no command tool is loaded";
