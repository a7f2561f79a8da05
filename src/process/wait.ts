/** Small timing helpers for the process layer; no timer they start outlives its purpose. */

export const sleep = (ms: number): Promise<void> => new Promise<void>((r) => setTimeout(r, ms));

/** `p`, or undefined after `ms`; the timer is cleared either way so it never holds the process open. */
export async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
