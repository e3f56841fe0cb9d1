// An own RPC's google.api.http bindings (google/api/http.proto): the REST routes grpc-gateway and most REST+gRPC
// services expose a method at. A path template's variables, the query and the body make the request message, as
// http.proto's comments specify: a variable `{field.path}` or `{field.path=segments/*}` binds that field; with
// `body: "*"` the body is the whole request (less what the path binds); with `body: "field"` the body is that field
// and the query binds the others; without a body, the query binds every field the path does not.
// Source: https://github.com/googleapis/googleapis/blob/master/google/api/http.proto (HttpRule's documentation).

import { bodyHolds, protoPath, queryKeys, setField } from './http-query.js';

const VERBS = ['get', 'put', 'post', 'delete', 'patch'];

/**
 * @typedef {object} HttpBinding one route of a method
 * @property {'GET'|'PUT'|'POST'|'DELETE'|'PATCH'} method
 * @property {string} template the path template as the rule writes it, e.g. '/v1/{name=shelves/*}/books'
 * @property {string} route what the HTTP listener routes on: the template itself when it has no variable or wildcard,
 *   else its literal part up to the first one and a wildcard (fastify's `/v1/*`), the rest matched by `pattern`
 * @property {RegExp} pattern the whole path, each variable a named group
 * @property {Array<{group: string, field: string}>} variables each variable's group and its field path (dotted)
 * @property {string} body '*', a field name, or '' (no body)
 * @property {string} responseBody the rule's response_body: the response field whose value is the HTTP body, or '' (the
 *   whole response message)
 */

/**
 * The google.api.http bindings of a method: its rule and the rule's additional_bindings, each as a route.
 * @param {{parsedOptions?: object[]|null}} method a protobufjs Method, resolved (from a .proto: a FileDescriptorSet's
 *   custom options are not kept by protobufjs's descriptor conversion)
 * @returns {HttpBinding[]} [] when the method has no rule
 * @throws {Error} for a template it cannot read (the message names it)
 */
export function httpBindingsOf(method) {
  const rule = (method.parsedOptions ?? []).find((o) => o && typeof o === 'object' && '(google.api.http)' in o)?.['(google.api.http)'];
  if (!rule) return [];
  const more = rule.additional_bindings ?? rule.additionalBindings ?? [];
  return [rule, ...(Array.isArray(more) ? more : [more])].flatMap((r) => {
    const verb = VERBS.find((v) => typeof r[v] === 'string');
    const responseBody = r.response_body ?? r.responseBody ?? '';
    if (verb) return [binding(verb.toUpperCase(), r[verb], r.body ?? '', responseBody)];
    if (r.custom?.path) return [binding(String(r.custom.kind).toUpperCase(), r.custom.path, r.body ?? '', responseBody)];
    return [];
  });
}

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Path segments of a template (`*`, `**` or literals) as a regular expression, each after a slash but the first of a
 * variable's: `**`, the last segment where it is one, matches zero or more segments (http.proto; grpc-gateway's OpPushM:
 * `{name=o/**}` matches `o`, `o/a` and `o/a/b`).
 * @param {string[]} segments
 * @param {boolean} leading the first segment comes after a slash too
 * @returns {string}
 */
const segmentsPattern = (segments, leading) => segments.map((segment, i) => {
  const slash = leading || i > 0;
  if (segment === '**') return slash ? '(?:/.*)?' : '.*';
  return `${slash ? '/' : ''}${segment === '*' ? '[^/]+' : escape(segment)}`;
}).join('');

/**
 * Compiles a path template: `/v1/{name=shelves/*}/books:publish`.
 * @param {string} method
 * @param {string} template
 * @param {string} body
 * @param {string} responseBody
 * @returns {HttpBinding}
 */
function binding(method, template, body, responseBody) {
  if (!template.startsWith('/')) throw new Error(`google.api.http template ${JSON.stringify(template)} must start with /`);
  const [pathPart, verb] = splitVerb(template);
  const variables = [];
  let source = '';
  // Tokens: a variable in braces (its pattern may hold slashes), or a literal/wildcard segment.
  for (const [, variable, segment] of pathPart.slice(1).matchAll(/\{([^}]*)\}|([^/{]+)/g)) {
    if (variable !== undefined) {
      const [field, pattern = '*'] = variable.split('=');
      const group = `v${variables.length}`;
      variables.push({ group, field: field.trim() });
      source += `/(?<${group}>${segmentsPattern(pattern.split('/'), false)})`;
    } else {
      source += segmentsPattern([segment], true);
    }
  }
  const open = pathPart.search(/[{*]/);
  const route = open < 0 ? template : `${pathPart.slice(0, pathPart.lastIndexOf('/', open) + 1)}*`;
  return {
    method: /** @type {HttpBinding['method']} */ (method), template, route,
    // The root template '/' has no segment: its pattern is the slash alone.
    pattern: new RegExp(`^${source || '/'}${verb ? `:${escape(verb)}` : ''}$`), variables, body, responseBody,
  };
}

/**
 * A template's `:verb` suffix: a colon after the last segment, outside any variable (`/v1/{name=shelves/*}:move`,
 * `/v1/**:verb` and `/v1/books:create` alike).
 */
function splitVerb(template) {
  let depth = 0;
  let lastSlash = -1;
  let colon = -1;
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (c === '{') depth++;
    else if (c === '}') depth--;
    else if (depth === 0 && c === '/') {
      lastSlash = i;
      colon = -1;
    } else if (depth === 0 && c === ':' && colon < 0) colon = i;
  }
  return colon > lastSlash ? [template.slice(0, colon), template.slice(colon + 1)] : [template, ''];
}

// grpc-gateway's filter of each binding: a query key under the body's field or a path variable's is not the query's to
// bind. The same for every request of the binding: worked out on its first.
const FILTERS = new WeakMap();
const filterOf = (b, type) => {
  if (!FILTERS.has(b)) FILTERS.set(b, [b.body, ...b.variables.map((v) => v.field)].filter(Boolean).map((p) => protoPath(type, p.split('.'))));
  return FILTERS.get(b);
};

/**
 * The request message of a matched route, in the proto3 JSON mapping (for a strict parse), as grpc-gateway v2 makes it:
 * the body as the binding says; then the path's variables, each read by its field's type (proto/own/http-query.js), in
 * place of what the body gave the field; then, where the body is not the whole request, the query for the fields
 * neither the path nor the body binds. A query key that names no field is ignored.
 * @param {HttpBinding} b
 * @param {RegExpMatchArray} match b.pattern's match of the path
 * @param {URLSearchParams} query
 * @param {unknown} body the parsed JSON body (undefined when none)
 * @param {any} type the request's protobufjs Type, resolved
 * @param {(body: unknown) => void} [checkBody] parses the body as the request strictly, throwing where it does not: called
 *   when a path variable would replace a field the body gives, since grpc-gateway decodes the body before the path binds
 * @returns {Record<string, unknown>}
 * @throws {Error} when the body is not a JSON object where `body: "*"` needs one, or a value does not parse for its field
 */
export function requestOf(b, match, query, body, type, checkBody = () => {}) {
  /** @type {Record<string, any>} */
  const request = {};
  if (b.body === '*') {
    if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) throw new Error('the body must be a JSON object');
    Object.assign(request, body ?? {});
    if (b.variables.some(({ field }) => bodyHolds(type, body, field))) checkBody(body);
  } else if (b.body && body !== undefined) {
    // The body is one field's JSON, set where its path leads (by JSON names, the spelling every other key gets).
    const path = protoPath(type, b.body.split('.'));
    let at = request;
    let on = type;
    for (const [i, name] of path.entries()) {
      const field = on?.fieldsArray.find((f) => (f.protoName ?? f.name) === name);
      const key = field?.jsonName ?? name;
      if (i === path.length - 1) at[key] = body;
      else at = at[key] ??= {};
      on = field?.resolvedType;
    }
  }
  for (const { group, field } of b.variables) {
    const text = decodeURIComponent(match.groups[group]);
    setField(type, request, field.split('.'), [text], { replace: true });
  }
  // The demo's GET routes have no query: nothing to build on their path.
  if (b.body !== '*' && query.size > 0) {
    const bound = filterOf(b, type);
    for (const { path, values } of queryKeys(query)) {
      const named = protoPath(type, path);
      if (bound.some((prefix) => prefix.every((segment, i) => named[i] === segment))) continue;
      setField(type, request, path, values);
    }
  }
  return request;
}
