/**
 * The two ways an OAuth upstream fails without a person at hand, each worded for the log line
 * and the caller: no usable login (run `hermit login`), or the authorization server could not
 * refresh the token right now (the stored login is kept and tried again later).
 */
import { shellQuote } from "../../platform/shell_quote.ts";

/** The upstream needs an interactive login; nothing in a non-interactive process can give it one. */
export class NeedsLogin extends Error {
  constructor(readonly server: string, readonly adapterDir: string, readonly why?: string) {
    super(
      `mcp_servers.${server} needs a login${why ? ` (${why})` : ""}: run 'hermit login ${
        shellQuote(adapterDir)
      } ${server}'`,
    );
    this.name = "NeedsLogin";
  }
}

/** Refreshing failed for a reason that may pass (network, 5xx); the login on disk is untouched. */
export class RefreshUnavailable extends Error {
  constructor(reason: string) {
    super(`could not refresh the OAuth access token (${reason}); the stored login is kept`);
    this.name = "RefreshUnavailable";
  }
}
