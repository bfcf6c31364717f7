/* fuzz-reply.c: libFuzzer over the GIO module's reply handling (scripts/fuzz gio).
 *
 * The input is what reachd's socket could send. It goes through the module's framer
 * (reachd-framing.c) in reads of a size the input's first byte picks, and each message
 * must be exactly what a cut at each NUL gives; an unfinished tail is never a message.
 * Each message then goes through every decoder (namespace, status, summary and
 * CheckTarget). Where the summary's scan of reachd's own encoding accepts a message,
 * json-glib must read the same from it, and every accepted status is a pair GLib documents. */
#include "reachd-framing.h"
#include "reachd-reply.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
decode_all (const char *message, size_t length)
{
  ReachdStatus status;
  GError *error = NULL;
  guint64 inode;

  if (!reachd_reply_decode_namespace (message, length, &inode, &error))
    g_assert (error != NULL);
  g_clear_error (&error);
  if (reachd_reply_decode_status (message, length, &status, &error))
    g_assert (status.available == (status.connectivity != G_NETWORK_CONNECTIVITY_LOCAL));
  else
    g_assert (error != NULL);
  g_clear_error (&error);
  if (reachd_reply_decode_summary (message, length, &status, &error))
    {
      ReachdStatus parsed;

      g_assert (status.available == (status.connectivity != G_NETWORK_CONNECTIVITY_LOCAL));
      g_assert (reachd_reply_decode_summary_json (message, length, &parsed, NULL));
      g_assert (parsed.available == status.available && parsed.connectivity == status.connectivity
                && parsed.metered == status.metered && parsed.continues == status.continues);
    }
  else
    g_assert (error != NULL);
  g_clear_error (&error);
  if (!reachd_reply_decode_target (message, length, &error))
    g_assert (error != NULL);
  g_clear_error (&error);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  ReachdFramer framer;
  size_t read_size, fed = 0, cut = 0;

  if (size == 0)
    return 0;
  read_size = 1 + data[0] % 64;
  data++;
  size--;
  reachd_framer_init (&framer, REACHD_REPLY_MAX_BYTES);
  while (fed < size)
    {
      size_t n = MIN (read_size, size - fed);
      const char *message;
      gsize length;

      reachd_framer_push (&framer, data + fed, n);
      fed += n;
      while (reachd_framer_next (&framer, &message, &length) == REACHD_FRAME_MESSAGE)
        {
          const uint8_t *nul = memchr (data + cut, 0, size - cut);

          g_assert (nul != NULL && (size_t) (nul - data) < fed);
          g_assert (length == (size_t) (nul - data) - cut && memcmp (message, data + cut, length) == 0);
          cut += length + 1;
          decode_all (message, length);
        }
    }
  g_assert (memchr (data + cut, 0, size - cut) == NULL);  /* nothing whole was left behind */
  reachd_framer_clear (&framer);
  return 0;
}
