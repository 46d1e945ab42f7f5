/* A stand-in for bcryptprimitives.dll, which Wine 8 lacks, for the Windows smoke suite only
   (tools/windows-smoke.sh puts it beside node.exe; Windows itself has the real one). Rust's
   standard library imports ProcessPrng from it for random seeds; this forwards to RtlGenRandom. */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!RtlGenRandom(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
