/* fuzz-reply.c: libFuzzer over the GIO module's reply handling (scripts/fuzz gio).
 *
 * The input is what reachd's socket could send: it is cut at each NUL as the module's
 * reader cuts it, and each message goes through every decoder (status, summary and
 * CheckTarget). Where the summary's scan of reachd's own encoding accepts a message,
 * json-glib must read the same from it. */
#include "reachd-reply.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  size_t start = 0;

  while (start <= size)
    {
      const uint8_t *nul = memchr (data + start, 0, size - start);
      size_t length = (nul != NULL ? (size_t) (nul - data) : size) - start;
      ReachdStatus status;
      GError *error = NULL;

      if (reachd_reply_decode_status ((const char *) data + start, length, &status, &error))
        g_assert (status.connectivity >= G_NETWORK_CONNECTIVITY_LOCAL && status.connectivity <= G_NETWORK_CONNECTIVITY_FULL);
      else
        g_assert (error != NULL);
      g_clear_error (&error);
      if (reachd_reply_decode_summary ((const char *) data + start, length, &status, &error))
        {
          ReachdStatus parsed;

          g_assert (status.connectivity >= G_NETWORK_CONNECTIVITY_LOCAL && status.connectivity <= G_NETWORK_CONNECTIVITY_FULL);
          g_assert (reachd_reply_decode_summary_json ((const char *) data + start, length, &parsed, NULL));
          g_assert (parsed.available == status.available && parsed.connectivity == status.connectivity
                    && parsed.metered == status.metered && parsed.continues == status.continues);
        }
      else
        g_assert (error != NULL);
      g_clear_error (&error);
      if (!reachd_reply_decode_target ((const char *) data + start, length, &error))
        g_assert (error != NULL);
      g_clear_error (&error);
      if (nul == NULL)
        break;
      start += length + 1;
    }
  return 0;
}
