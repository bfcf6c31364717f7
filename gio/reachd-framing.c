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
  framer->taken = 0;
}

/* Drops the message handed out last. */
static void
drop_taken (ReachdFramer *framer)
{
  if (framer->taken == 0)
    return;
  g_byte_array_remove_range (framer->buffer, 0, framer->taken);
  framer->taken = 0;
  framer->scanned = 0;
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
  framer->taken = 0;
}

guint8 *
reachd_framer_reserve (ReachdFramer *framer, gsize size)
{
  guint old;

  drop_taken (framer);
  old = framer->buffer->len;
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
  drop_taken (framer);
  g_byte_array_append (framer->buffer, data, length);
}

ReachdFrame
reachd_framer_next (ReachdFramer *framer, const char **message, gsize *length)
{
  GByteArray *buffer;
  const guint8 *nul;

  drop_taken (framer);
  buffer = framer->buffer;
  nul = memchr (buffer->data + framer->scanned, 0, buffer->len - framer->scanned);
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
  *message = (const char *) buffer->data;
  framer->taken = *length + 1;
  return REACHD_FRAME_MESSAGE;
}
