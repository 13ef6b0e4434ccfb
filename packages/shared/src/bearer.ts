/**
 * The token of an `Authorization: Bearer <token>` header (RFC 6750: the scheme case-insensitive, spaces or tabs around
 * the token), or undefined when the header is not of that form. One reading for every route, so a header accepted
 * on one is accepted on all (a no-break space after `Bearer` is no separator anywhere).
 */
const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

export function bearerToken(header: string): string | undefined {
  return BEARER.exec(header)?.[1];
}
