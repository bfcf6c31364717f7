/* reachd-reply.c: decoding reachd's replies for the GIO module; no IO, no state.
 *
 * Every reply is bounded twice before json-glib parses it: in size (REACHD_REPLY_MAX_BYTES,
 * also enforced by the module's reader) and in nesting depth (REACHD_REPLY_MAX_DEPTH),
 * because json-glib's parser recurses once per level and has no limit of its own. */
#include "reachd-reply.h"

#include <json-glib/json-glib.h>
#include <string.h>

/* Outside strings only JSON's own characters may appear: then this scan and json-glib's
 * scanner (which would also take comments and single quotes) agree on where strings are,
 * so the depth counted here is the depth json-glib would recurse to. */
static gboolean
shape_is_bounded (const char *text, gsize length, GError **error)
{
  guint depth = 0;
  gboolean in_string = FALSE;

  if (length > REACHD_REPLY_MAX_BYTES)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reply of %" G_GSIZE_FORMAT " bytes is over the limit", length);
      return FALSE;
    }
  for (gsize i = 0; i < length; i++)
    {
      char c = text[i];

      if (in_string)
        {
          if (c == '\\')
            i++;
          else if (c == '"')
            in_string = FALSE;
          else if (c == '\0')
            break;
          continue;
        }
      switch (c)
        {
        case '"':
          in_string = TRUE;
          break;
        case '{':
        case '[':
          if (++depth > REACHD_REPLY_MAX_DEPTH)
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reply nested deeper than %d", REACHD_REPLY_MAX_DEPTH);
              return FALSE;
            }
          break;
        case '}':
        case ']':
          if (depth > 0)
            depth--;
          break;
        case ' ': case '\t': case '\n': case '\r': case ',': case ':':
        case '+': case '-': case '.':
          break;
        default:
          if (!g_ascii_isalnum (c))
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reply is not JSON (byte %" G_GSIZE_FORMAT ")", i);
              return FALSE;
            }
        }
    }
  return TRUE;
}

static JsonObject *
member_object (JsonObject *object, const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;
  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

static const char *
member_string (JsonObject *object, const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING
         ? json_node_get_string (node) : NULL;
}

static gboolean
member_true (JsonObject *object, const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_BOOLEAN
         && json_node_get_boolean (node);
}

/* Parses one reply and returns its "parameters" (borrowed from *parser_out), or NULL with
 * an error: INVALID_DATA for malformed text, NOT_SUPPORTED for a Varlink error reply
 * (NOT_FOUND for MethodNotFound when `method_not_found_apart`). */
static JsonObject *
parse_parameters (const char *text, gsize length, gboolean method_not_found_apart, JsonParser **parser_out,
                  JsonObject **root_out, GError **error)
{
  JsonParser *parser;
  JsonNode *root;
  JsonObject *object;
  const char *varlink_error;
  GError *local = NULL;

  *parser_out = NULL;
  if (!shape_is_bounded (text, length, error))
    return NULL;
  parser = json_parser_new_immutable ();
  if (!json_parser_load_from_data (parser, text, (gssize) length, &local))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reply is not JSON: %s", local->message);
      g_error_free (local);
      g_object_unref (parser);
      return NULL;
    }
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reply is not a JSON object");
      g_object_unref (parser);
      return NULL;
    }
  object = json_node_get_object (root);
  varlink_error = member_string (object, "error");
  if (varlink_error != NULL)
    {
      gboolean unknown_method = method_not_found_apart && strcmp (varlink_error, "org.varlink.service.MethodNotFound") == 0;

      g_set_error (error, G_IO_ERROR, unknown_method ? G_IO_ERROR_NOT_FOUND : G_IO_ERROR_NOT_SUPPORTED,
                   "reachd answered %s", varlink_error);
      g_object_unref (parser);
      return NULL;
    }
  if (json_object_get_member (object, "error") != NULL || member_object (object, "parameters") == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reply has no parameters");
      g_object_unref (parser);
      return NULL;
    }
  *parser_out = parser;
  *root_out = object;
  return member_object (object, "parameters");
}

/* The reply's path and its status; NULL (with the parser freed) when either is missing.
 * `what` names the path in the error ("path", "target"). */
static const char *
parse_path_status (const char *text, gsize length, const char *what, JsonParser **parser,
                   JsonObject **root, JsonObject **path, GError **error)
{
  JsonObject *parameters = parse_parameters (text, length, FALSE, parser, root, error);
  const char *state;

  if (parameters == NULL)
    return NULL;
  *path = member_object (parameters, "path");
  state = member_string (*path, "status");
  if (state == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reply has no %s status", what);
      g_clear_object (parser);
    }
  return state;
}

void
reachd_reply_map (const char *state, const char *connectivity, gboolean expensive, gboolean constrained, gboolean continues,
                  ReachdStatus *status)
{
  status->available = strcmp (state, "satisfied") == 0;
  /* Only the pairs GLib documents: available FALSE is LOCAL, available TRUE is FULL, LIMITED
   * or PORTAL (the table is at the top of reachd-network-monitor.c). */
  if (!status->available)
    status->connectivity = G_NETWORK_CONNECTIVITY_LOCAL;
  else if (connectivity == NULL)
    status->connectivity = G_NETWORK_CONNECTIVITY_FULL;
  else if (strcmp (connectivity, "portal") == 0)
    status->connectivity = G_NETWORK_CONNECTIVITY_PORTAL;
  else if (strcmp (connectivity, "limited") == 0 || strcmp (connectivity, "none") == 0
           || strcmp (connectivity, "local") == 0)
    status->connectivity = G_NETWORK_CONNECTIVITY_LIMITED;  /* a route, but probes found no internet */
  else  /* full, partial, unknown (not probed) and any newer value */
    status->connectivity = G_NETWORK_CONNECTIVITY_FULL;
  status->metered = expensive || constrained;
  status->continues = continues;
}

/* `facts` holds status (given), connectivity, isExpensive and isConstrained. */
static void
map_status (const char *state, JsonObject *facts, JsonObject *root, ReachdStatus *status)
{
  reachd_reply_map (state, member_string (facts, "connectivity"), member_true (facts, "isExpensive"),
             member_true (facts, "isConstrained"), member_true (root, "continues"), status);
}

gboolean
reachd_reply_decode_status (const char *text, gsize length, ReachdStatus *status, GError **error)
{
  JsonParser *parser;
  JsonObject *root, *path;
  const char *state;

  state = parse_path_status (text, length, "path", &parser, &root, &path, error);
  if (state == NULL)
    return FALSE;
  map_status (state, path, root, status);
  g_object_unref (parser);
  return TRUE;
}

gboolean
reachd_reply_decode_summary_json (const char *text, gsize length, ReachdStatus *status, GError **error)
{
  JsonParser *parser;
  JsonObject *root, *parameters;
  const char *state;

  parameters = parse_parameters (text, length, TRUE, &parser, &root, error);
  if (parameters == NULL)
    return FALSE;
  state = member_string (parameters, "status");
  if (state == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reply has no status");
      g_object_unref (parser);
      return FALSE;
    }
  map_status (state, parameters, root, status);
  g_object_unref (parser);
  return TRUE;
}

/* Consumes `literal` at *at. */
static gboolean
take_literal (const char **at, const char *end, const char *literal)
{
  gsize length = strlen (literal);

  if ((gsize) (end - *at) < length || memcmp (*at, literal, length) != 0)
    return FALSE;
  *at += length;
  return TRUE;
}

/* Consumes `true` or `false`. */
static gboolean
take_bool (const char **at, const char *end, gboolean *value)
{
  *value = take_literal (at, end, "true");
  return *value || take_literal (at, end, "false");
}

/* Consumes a string of 1 to 23 ASCII letters and its closing quote into word. */
static gboolean
take_word (const char **at, const char *end, char word[24])
{
  gsize length = 0;

  while (*at < end && g_ascii_isalpha (**at) && length < 23)
    word[length++] = *(*at)++;
  word[length] = '\0';
  return length > 0 && take_literal (at, end, "\"");
}

/* reachd's own encoding of a summary stream reply, byte for byte (sorted keys, no spaces,
 * bare words), read without a parser; anything else goes to json-glib. */
static gboolean
decode_canonical_summary (const char *text, gsize length, ReachdStatus *status)
{
  const char *at = text, *end = text + length;
  char state[24], connectivity[24];
  gboolean expensive, constrained;

  if (!take_literal (&at, end, "{\"continues\":true,\"parameters\":{\"connectivity\":\"")
      || !take_word (&at, end, connectivity) || !take_literal (&at, end, ",\"isConstrained\":")
      || !take_bool (&at, end, &constrained) || !take_literal (&at, end, ",\"isExpensive\":")
      || !take_bool (&at, end, &expensive) || !take_literal (&at, end, ",\"status\":\"")
      || !take_word (&at, end, state) || !take_literal (&at, end, "}}") || at != end)
    return FALSE;
  reachd_reply_map (state, connectivity, expensive, constrained, TRUE, status);
  return TRUE;
}

gboolean
reachd_reply_decode_summary (const char *text, gsize length, ReachdStatus *status, GError **error)
{
  return decode_canonical_summary (text, length, status) || reachd_reply_decode_summary_json (text, length, status, error);
}

gboolean
reachd_reply_decode_namespace (const char *text, gsize length, guint64 *inode, GError **error)
{
  JsonParser *parser;
  JsonObject *root, *parameters;
  JsonNode *node;

  *inode = 0;
  parameters = parse_parameters (text, length, TRUE, &parser, &root, error);
  if (parameters == NULL)
    return FALSE;
  node = json_object_get_member (parameters, "inode");
  if (node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_INT64
      && json_node_get_int (node) > 0)
    *inode = (guint64) json_node_get_int (node);
  g_object_unref (parser);
  return TRUE;
}

static const struct {
  const char *reason;
  GQuark (*domain) (void);
  int code;
} target_errors[] = {
  { "nameNotFound", g_resolver_error_quark, G_RESOLVER_ERROR_NOT_FOUND },
  { "noDNSServer", g_resolver_error_quark, G_RESOLVER_ERROR_TEMPORARY_FAILURE },
  { "resolutionFailed", g_resolver_error_quark, G_RESOLVER_ERROR_TEMPORARY_FAILURE },
  { "resolutionTimedOut", g_resolver_error_quark, G_RESOLVER_ERROR_TEMPORARY_FAILURE },
  { "noRoute", g_io_error_quark, G_IO_ERROR_NETWORK_UNREACHABLE },
  { "noInterface", g_io_error_quark, G_IO_ERROR_NETWORK_UNREACHABLE },
  { "blackholeRoute", g_io_error_quark, G_IO_ERROR_NETWORK_UNREACHABLE },
  { "prohibitedRoute", g_io_error_quark, G_IO_ERROR_NETWORK_UNREACHABLE },
};

gboolean
reachd_reply_decode_target (const char *text, gsize length, GError **error)
{
  JsonParser *parser;
  JsonObject *root, *path;
  const char *state, *reason;

  state = parse_path_status (text, length, "target", &parser, &root, &path, error);
  if (state == NULL)
    return FALSE;
  if (strcmp (state, "satisfied") == 0)
    {
      g_object_unref (parser);
      return TRUE;
    }
  reason = member_string (path, "unsatisfiedReason");
  for (gsize i = 0; i < G_N_ELEMENTS (target_errors); i++)
    if (reason != NULL && strcmp (reason, target_errors[i].reason) == 0)
      {
        g_set_error (error, target_errors[i].domain (), target_errors[i].code, "reachd: %s", reason);
        g_object_unref (parser);
        return FALSE;
      }
  /* unreachableRoute, gatewayUnreachable, noCarrier, interfaceDown, noAddress, … */
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE, "reachd: %s", reason != NULL ? reason : state);
  g_object_unref (parser);
  return FALSE;
}
