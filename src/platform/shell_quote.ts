/**
 * Words for the command lines hermit prints for a person to paste (`hermit check DIR`, `hermit
 * login DIR SERVER`): POSIX sh quoting, applied only when a word needs it. Pure.
 */

/**
 * The path `s` as one shell word: quoted only when it needs to be, and a leading `-` made `./-` so
 * the command does not take it for an option.
 */
export function shellQuote(s: string): string {
  if (s.startsWith("-")) s = `./${s}`; // not an option
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
