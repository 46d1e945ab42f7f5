'use strict'
// Who may talk to the terminal server. Every HTTP request and the WebSocket upgrade carry the token,
// either as `?token=` or as the cookie the page's first load sets; it is compared in constant time.
// The upgrade must also come from a page this server served: its `Origin` must name the `Host` the
// request was sent to, so another site open in the same browser cannot drive the terminal.
const { createHash, timingSafeEqual } = require('node:crypto')

/** Compares two strings in time that depends on neither (both are hashed to one length first). */
function sameSecret(given, expected) {
  const digest = (text) => createHash('sha256').update(text).digest()
  return timingSafeEqual(digest(given), digest(expected))
}

/** The cookie's name: cookies are shared by every port of a host, so it names the port. */
function cookieName(port) {
  return `shellwright_token_${port}`
}

/** The value of cookie `name` in a `Cookie` header, or undefined. */
function readCookie(header, name) {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/**
 * The request's target as a URL, or null when it cannot be read as one. (The target is appended
 * to a base rather than resolved against it: `//x` must stay a path.)
 */
function requestUrl(request) {
  try {
    return new URL(`http://localhost${request.url ?? '/'}`)
  } catch {
    return null
  }
}

/** The token a request presents (query first, then cookie), or undefined. */
function presentedToken(request, url, port) {
  return url.searchParams.get('token') ?? readCookie(request.headers.cookie, cookieName(port))
}

/** Whether the request (whose target is `url`) presents `token`. */
function isAuthorized(request, url, token, port) {
  const given = presentedToken(request, url, port)
  return given !== undefined && sameSecret(given, token)
}

/**
 * Whether a WebSocket upgrade comes from a page of this server: its `Origin` is `http://<Host>`.
 * Clients that are not browsers send no `Origin`; they still need the token.
 */
function isSameOrigin(request) {
  const origin = request.headers.origin
  if (origin === undefined) return true
  const host = request.headers.host
  return host !== undefined && (origin === `http://${host}` || origin === `https://${host}`)
}

/** The `Set-Cookie` value that lets the page's assets and socket through after the first load. */
function tokenCookie(token, port) {
  return `${cookieName(port)}=${token}; Path=/; HttpOnly; SameSite=Strict`
}

module.exports = { requestUrl, isAuthorized, isSameOrigin, tokenCookie }
