// What makes a provider base URL acceptable: checked when the configuration is read (a bad one
// exits 2, which pm2 does not restart) and again when a client is made (the library's own guard).

/** Loopback only: plain HTTP to anything else would carry the signed request in clear text. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * Why the base URL cannot be used, or undefined when it can. Never repeats credentials written into
 * it.
 */
export function baseUrlProblem(baseUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return 'expected an http(s) URL such as https://app.cloopen.com:8883';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return `expected an http(s) URL such as https://app.cloopen.com:8883, not ${url.protocol}`;
  // Before the host is named below: in `http://ops#pass@host` the parser's host is the user name,
  // and the rest a fragment.
  if (url.search || url.hash || url.username || url.password)
    return 'expected a URL without query, fragment or credentials';
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
    return `plain http is allowed only to a loopback host; use https for ${url.hostname}`;
  return undefined;
}
