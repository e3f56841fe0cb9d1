// An own RPC's google.api.http bindings (google/api/http.proto): the REST routes grpc-gateway and most REST+gRPC
// services expose a method at. A path template's variables, the query and the body make the request message, as
// http.proto's comments specify: a variable `{field.path}` or `{field.path=segments/*}` binds that field; with
// `body: "*"` the body is the whole request (less what the path binds); with `body: "field"` the body is that field
// and the query binds the others; without a body, the query binds every field the path does not.
// Source: https://github.com/googleapis/googleapis/blob/master/google/api/http.proto (HttpRule's documentation).

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

/** One segment pattern of a template (`*`, `**` or a literal) as a regular expression. */
const segmentPattern = (segment) => (segment === '**' ? '.+' : segment === '*' ? '[^/]+' : escape(segment));

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
      source += `/(?<${group}>${pattern.split('/').map(segmentPattern).join('/')})`;
    } else {
      source += `/${segmentPattern(segment)}`;
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

/** A template's `:verb` suffix, after the last segment. */
function splitVerb(template) {
  const last = template.lastIndexOf('/');
  const colon = template.indexOf(':', last);
  return colon > last && !template.slice(last).includes('}') ? [template.slice(0, colon), template.slice(colon + 1)] : [template, ''];
}

/**
 * Sets a dotted field path in a JSON object: `a.b` → {a: {b: value}}.
 * @param {Record<string, any>} object
 * @param {string} dotted
 * @param {unknown} value
 * @param {boolean} [append] a query parameter given twice binds a repeated field; a path variable replaces
 */
function setPath(object, dotted, value, append = false) {
  const keys = dotted.split('.');
  let at = object;
  for (const key of keys.slice(0, -1)) at = at[key] ??= {};
  const last = keys.at(-1);
  at[last] = append && at[last] !== undefined ? [...[at[last]].flat(), value] : value;
}

/**
 * The request message of a matched route, in the proto3 JSON mapping (for a strict parse): the path's variables, the
 * body as the binding says, and the query for the fields neither binds.
 * @param {HttpBinding} b
 * @param {RegExpMatchArray} match b.pattern's match of the path
 * @param {URLSearchParams} query
 * @param {unknown} body the parsed JSON body (undefined when none)
 * @returns {Record<string, unknown>}
 * @throws {Error} when the body is not a JSON object where `body: "*"` needs one
 */
export function requestOf(b, match, query, body) {
  /** @type {Record<string, unknown>} */
  const request = {};
  if (b.body === '*') {
    if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) throw new Error('the body must be a JSON object');
    Object.assign(request, body ?? {});
  } else {
    if (b.body && body !== undefined) setPath(request, b.body, body);
    for (const [key, value] of query) setPath(request, key, value, true);
  }
  for (const { group, field } of b.variables) setPath(request, field, decodeURIComponent(match.groups[group]));
  return request;
}
