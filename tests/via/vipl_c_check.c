/* vipl.h compiles as C: every type and the prototypes. */
#include "via/vipl.h"

int via_c_check(void);
int via_c_check(void) {
  VIP_DESCRIPTOR d;
  VIP_NIC_HANDLE nic = 0;
  d.CS.Control = VIP_CONTROL_OP_SENDRECV | VIP_CONTROL_IMMEDIATE;
  d.DS[0].Local.Length = 0;
  return (int)sizeof d + (VipCloseNic(nic) == VIP_INVALID_PARAMETER ? 0 : 1);
}
