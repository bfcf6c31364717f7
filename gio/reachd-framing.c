/* reachd-framing.c: the splitter of reachd-framing.h; pure, table-tested (gio/test-gio.c)
 * and fuzzed (gio/fuzz-reply.c). */
#include "reachd-framing.h"

#include <string.h>

void
reachd_framer_init (ReachdFramer *framer, gsize limit)
{
  framer->buffer = g_byte_array_new ();
  framer->scanned = 0;
  framer->limit = limit;
}

void
reachd_framer_clear (ReachdFramer *framer)
{
  g_clear_pointer (&framer->buffer, g_byte_array_unref);
}

void
reachd_framer_reset (ReachdFramer *framer)
{
  g_byte_array_set_size (framer->buffer, 0);
  framer->scanned = 0;
}

guint8 *
reachd_framer_reserve (ReachdFramer *framer, gsize size)
{
  guint old = framer->buffer->len;

  g_byte_array_set_size (framer->buffer, old + size);
  return framer->buffer->data + old;
}

void
reachd_framer_commit (ReachdFramer *framer, gsize reserved, gsize filled)
{
  g_byte_array_set_size (framer->buffer, framer->buffer->len - reserved + MIN (filled, reserved));
}

void
reachd_framer_push (ReachdFramer *framer, const void *data, gsize length)
{
  g_byte_array_append (framer->buffer, data, length);
}

ReachdFrame
reachd_framer_next (ReachdFramer *framer, char **message, gsize *length)
{
  GByteArray *buffer = framer->buffer;
  const guint8 *nul = memchr (buffer->data + framer->scanned, 0, buffer->len - framer->scanned);

  *message = NULL;
  *length = 0;
  if (nul == NULL)
    {
      framer->scanned = buffer->len;
      return buffer->len > framer->limit ? REACHD_FRAME_OVERSIZE : REACHD_FRAME_NONE;
    }
  *length = nul - buffer->data;
  if (*length > framer->limit)
    return REACHD_FRAME_OVERSIZE;
  *message = g_strndup ((const char *) buffer->data, *length);
  g_byte_array_remove_range (buffer, 0, *length + 1);
  framer->scanned = 0;
  return REACHD_FRAME_MESSAGE;
}
