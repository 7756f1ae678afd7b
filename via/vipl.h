/* vipl.h: the VI Provider Library (VIPL) API over the emulated CLAN network.
 *
 * Names, types, constants and the descriptor layout follow the de facto
 * standard VIPL header (VI Architecture specification 1.0 and the Intel VIPL
 * reference), so VIA applications compile against it unchanged. What this
 * implementation adds is at the end, under "CLAN extensions", all named
 * VipClan* / VIP_CLAN_*: the two extensions of paper 001 sect. 3.7 (deferred
 * sends, request splitting), the PIO/DMA switch, protection, a wake-up for
 * CQ waiters, and the allocator for memory that peers can write (see
 * via/DESIGN.md).
 *
 * Usable from C and C++. Every call returns a VIP_RETURN and never aborts:
 * a stale or foreign handle is VIP_INVALID_PARAMETER.
 */
#ifndef CLANORB_VIA_VIPL_H
#define CLANORB_VIA_VIPL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif

/* ---- basic types ---- */
typedef uint64_t VIP_UINT64;
typedef uint32_t VIP_UINT32;
typedef uint16_t VIP_UINT16;
typedef uint8_t VIP_UINT8;
typedef unsigned char VIP_UCHAR;
typedef char VIP_CHAR;
typedef unsigned short VIP_USHORT;
typedef short VIP_SHORT;
typedef unsigned long VIP_ULONG;
typedef long VIP_LONG;
typedef int VIP_BOOLEAN;
typedef void* VIP_PVOID;

#define VIP_TRUE 1
#define VIP_FALSE 0

/* ---- handles ---- */
typedef VIP_PVOID VIP_QOS;
typedef VIP_PVOID VIP_NIC_HANDLE;
typedef VIP_PVOID VIP_VI_HANDLE;
typedef VIP_PVOID VIP_CQ_HANDLE;
typedef VIP_PVOID VIP_PROTECTION_HANDLE;
typedef VIP_UINT32 VIP_MEM_HANDLE;
typedef VIP_PVOID VIP_CONN_HANDLE;

/* Timeouts are in milliseconds; this one never expires. */
#define VIP_INFINITE ((VIP_ULONG)0xffffffffUL)

/* ---- descriptors ---- */
struct _VIP_DESCRIPTOR;

typedef union {
  VIP_UINT64 AddressBits;
  VIP_PVOID Address;
  struct _VIP_DESCRIPTOR* Descriptor;
} VIP_PVOID64;

typedef struct {
  VIP_PVOID64 Next;
  VIP_MEM_HANDLE NextHandle;
  VIP_UINT16 SegCount;
  VIP_UINT16 Control;
  VIP_UINT32 Reserved;
  VIP_UINT32 ImmediateData;
  VIP_UINT32 Length; /* receive: bytes received (written on completion) */
  VIP_UINT32 Status; /* written on completion */
} VIP_CONTROL_SEGMENT;

#define VIP_CONTROL_OP_SENDRECV 0x0
#define VIP_CONTROL_OP_RDMAWRITE 0x1
#define VIP_CONTROL_OP_RDMAREAD 0x2
#define VIP_CONTROL_OP_RESERVED 0x3
#define VIP_CONTROL_OP_MASK 0x3
#define VIP_CONTROL_IMMEDIATE 0x4
#define VIP_CONTROL_QFENCE 0x8
#define VIP_CONTROL_RESERVED 0xfff0

#define VIP_STATUS_DONE 0x1
#define VIP_STATUS_FORMAT_ERROR 0x2
#define VIP_STATUS_PROTECTION_ERROR 0x4
#define VIP_STATUS_LENGTH_ERROR 0x8
#define VIP_STATUS_PARTIAL_ERROR 0x10
#define VIP_STATUS_DESC_FLUSHED_ERROR 0x20
#define VIP_STATUS_TRANSPORT_ERROR 0x40
#define VIP_STATUS_RDMA_PROT_ERROR 0x80
#define VIP_STATUS_REMOTE_DESC_ERROR 0x100
#define VIP_STATUS_ERROR_MASK 0x1fe

#define VIP_STATUS_OP_SEND 0x00000
#define VIP_STATUS_OP_RECEIVE 0x10000
#define VIP_STATUS_OP_RDMA_WRITE 0x20000
#define VIP_STATUS_OP_REMOTE_RDMA_WRITE 0x30000
#define VIP_STATUS_OP_RDMA_READ 0x40000
#define VIP_STATUS_OP_MASK 0x70000
#define VIP_STATUS_IMMEDIATE 0x80000
#define VIP_STATUS_RESERVED 0xfff0fe00

typedef struct {
  VIP_PVOID64 Data;
  VIP_MEM_HANDLE Handle;
  VIP_UINT32 Reserved;
} VIP_ADDRESS_SEGMENT;

typedef struct {
  VIP_PVOID64 Data;
  VIP_MEM_HANDLE Handle;
  VIP_UINT32 Length;
} VIP_DATA_SEGMENT;

typedef union {
  VIP_ADDRESS_SEGMENT Remote;
  VIP_DATA_SEGMENT Local;
} VIP_DESCRIPTOR_SEGMENT;

/* A descriptor with more than two data segments is allocated larger: the
 * segments follow the control segment contiguously (CS.SegCount of them). */
typedef struct _VIP_DESCRIPTOR {
  VIP_CONTROL_SEGMENT CS;
  VIP_DESCRIPTOR_SEGMENT DS[2];
} VIP_DESCRIPTOR;

#define VIP_DESCRIPTOR_ALIGNMENT 64

/* ---- return codes ---- */
typedef enum {
  VIP_SUCCESS,
  VIP_NOT_DONE,
  VIP_INVALID_PARAMETER,
  VIP_ERROR_RESOURCE,
  VIP_TIMEOUT,
  VIP_REJECT,
  VIP_INVALID_RELIABILITY_LEVEL,
  VIP_INVALID_MTU,
  VIP_INVALID_QOS,
  VIP_INVALID_PTAG,
  VIP_INVALID_RDMAREAD,
  VIP_DESCRIPTOR_ERROR,
  VIP_INVALID_STATE,
  VIP_ERROR_NAMESERVICE,
  VIP_NO_MATCH,
  VIP_NOT_REACHABLE,
  VIP_ERROR_NOT_SUPPORTED
} VIP_RETURN;

/* ---- reliability levels ---- */
typedef VIP_USHORT VIP_RELIABILITY_LEVEL;
#define VIP_SERVICE_UNRELIABLE 1
#define VIP_SERVICE_RELIABLE_DELIVERY 2
#define VIP_SERVICE_RELIABLE_RECEPTION 4

/* ---- network addresses ----
 * HostAddressLen bytes of host address (here: the OOB node name) followed by
 * DiscriminatorLen bytes of discriminator (which selects the listening port).
 * Callers provide room for VIP_CLAN_MAX_HOST_ADDRESS + VIP_CLAN_MAX_DISCRIMINATOR. */
typedef struct {
  VIP_UINT16 HostAddressLen;
  VIP_UINT16 DiscriminatorLen;
  VIP_UINT8 HostAddress[1];
} VIP_NET_ADDRESS;

/* ---- attributes ---- */
typedef struct {
  VIP_CHAR Name[64];
  VIP_ULONG HardwareVersion;
  VIP_ULONG ProviderVersion;
  VIP_UINT16 NicAddressLen;
  const VIP_UINT8* LocalNicAddress;
  VIP_BOOLEAN ThreadSafe;
  VIP_UINT16 MaxDiscriminatorLen;
  VIP_ULONG MaxRegisterBytes;
  VIP_ULONG MaxRegisterRegions;
  VIP_ULONG MaxRegisterBlockBytes;
  VIP_ULONG MaxVI;
  VIP_ULONG MaxDescriptorsPerQueue;
  VIP_ULONG MaxSegmentsPerDesc;
  VIP_ULONG MaxCQ;
  VIP_ULONG MaxCQEntries;
  VIP_ULONG MaxTransferSize;
  VIP_ULONG NativeMTU;
  VIP_ULONG MaxPtags;
  VIP_RELIABILITY_LEVEL ReliabilityLevelSupport;
  VIP_RELIABILITY_LEVEL RDMAReadSupport;
} VIP_NIC_ATTRIBUTES;

typedef struct {
  VIP_PROTECTION_HANDLE Ptag;
  VIP_BOOLEAN EnableRdmaWrite;
  VIP_BOOLEAN EnableRdmaRead;
} VIP_MEM_ATTRIBUTES;

typedef enum {
  VIP_STATE_IDLE,
  VIP_STATE_CONNECTED,
  VIP_STATE_CONNECT_PENDING,
  VIP_STATE_ERROR
} VIP_VI_STATE;

typedef struct {
  VIP_RELIABILITY_LEVEL ReliabilityLevel;
  VIP_ULONG MaxTransferSize;
  VIP_QOS QoS;
  VIP_PROTECTION_HANDLE Ptag;
  VIP_BOOLEAN EnableRdmaWrite;
  VIP_BOOLEAN EnableRdmaRead;
} VIP_VI_ATTRIBUTES;

/* ---- NIC ----
 * DeviceName is this NIC's node name on the host ([A-Za-z0-9._-]{1,64}); it is
 * the host name peers resolve with VipNSGetHostByName. NULL: "via-<pid>". */
VIP_RETURN VipOpenNic(IN const VIP_CHAR* DeviceName, OUT VIP_NIC_HANDLE* NicHandle);
VIP_RETURN VipCloseNic(IN VIP_NIC_HANDLE NicHandle);
VIP_RETURN VipQueryNic(IN VIP_NIC_HANDLE NicHandle, OUT VIP_NIC_ATTRIBUTES* Attributes);

/* ---- protection tags and memory ---- */
VIP_RETURN VipCreatePtag(IN VIP_NIC_HANDLE NicHandle, OUT VIP_PROTECTION_HANDLE* ProtectionTag);
VIP_RETURN VipDestroyPtag(IN VIP_NIC_HANDLE NicHandle, IN VIP_PROTECTION_HANDLE ProtectionTag);
/* Any memory may be registered for sends and descriptors. Receive buffers must
 * also lie in memory from VipClanAllocMem (memory a peer can write). */
VIP_RETURN VipRegisterMem(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID VirtualAddress,
                          IN VIP_ULONG Length, IN VIP_MEM_ATTRIBUTES* MemAttributes,
                          OUT VIP_MEM_HANDLE* MemHandle);
VIP_RETURN VipDeregisterMem(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID VirtualAddress,
                            IN VIP_MEM_HANDLE MemHandle);
VIP_RETURN VipQueryMem(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID VirtualAddress,
                       IN VIP_MEM_HANDLE MemHandle, OUT VIP_MEM_ATTRIBUTES* MemAttributes);

/* ---- VIs ---- */
VIP_RETURN VipCreateVi(IN VIP_NIC_HANDLE NicHandle, IN VIP_VI_ATTRIBUTES* ViAttributes,
                       IN VIP_CQ_HANDLE SendCQHandle, IN VIP_CQ_HANDLE RecvCQHandle,
                       OUT VIP_VI_HANDLE* ViHandle);
VIP_RETURN VipDestroyVi(IN VIP_VI_HANDLE ViHandle);
VIP_RETURN VipQueryVi(IN VIP_VI_HANDLE ViHandle, OUT VIP_VI_STATE* State,
                      OUT VIP_VI_ATTRIBUTES* Attributes, OUT VIP_BOOLEAN* SendQueueEmpty,
                      OUT VIP_BOOLEAN* RecvQueueEmpty);
VIP_RETURN VipSetViAttributes(IN VIP_VI_HANDLE ViHandle, IN VIP_VI_ATTRIBUTES* Attributes);

/* ---- data transfer ----
 * Done/Wait return VIP_SUCCESS with a descriptor that completed without error,
 * VIP_DESCRIPTOR_ERROR with one whose Status has an error bit, VIP_NOT_DONE /
 * VIP_TIMEOUT when none completed. */
VIP_RETURN VipPostSend(IN VIP_VI_HANDLE ViHandle, IN VIP_DESCRIPTOR* DescriptorPtr,
                       IN VIP_MEM_HANDLE MemoryHandle);
VIP_RETURN VipSendDone(IN VIP_VI_HANDLE ViHandle, OUT VIP_DESCRIPTOR** DescriptorPtr);
VIP_RETURN VipSendWait(IN VIP_VI_HANDLE ViHandle, IN VIP_ULONG TimeOut,
                       OUT VIP_DESCRIPTOR** DescriptorPtr);
VIP_RETURN VipPostRecv(IN VIP_VI_HANDLE ViHandle, IN VIP_DESCRIPTOR* DescriptorPtr,
                       IN VIP_MEM_HANDLE MemoryHandle);
VIP_RETURN VipRecvDone(IN VIP_VI_HANDLE ViHandle, OUT VIP_DESCRIPTOR** DescriptorPtr);
VIP_RETURN VipRecvWait(IN VIP_VI_HANDLE ViHandle, IN VIP_ULONG TimeOut,
                       OUT VIP_DESCRIPTOR** DescriptorPtr);

/* ---- connection management ---- */
VIP_RETURN VipConnectWait(IN VIP_NIC_HANDLE NicHandle, IN VIP_NET_ADDRESS* LocalAddr,
                          IN VIP_ULONG Timeout, OUT VIP_NET_ADDRESS* RemoteAddr,
                          OUT VIP_VI_ATTRIBUTES* RemoteViAttributes,
                          OUT VIP_CONN_HANDLE* ConnHandle);
/* VipConnectAccept: on VIP_INVALID_PARAMETER (with a valid ConnHandle),
 * VIP_INVALID_STATE, VIP_INVALID_RELIABILITY_LEVEL and VIP_INVALID_MTU the
 * request stays pending (accept it on another VI, or reject it); on any other
 * failure it has been refused and ConnHandle is gone. */
VIP_RETURN VipConnectAccept(IN VIP_CONN_HANDLE ConnHandle, IN VIP_VI_HANDLE ViHandle);
VIP_RETURN VipConnectReject(IN VIP_CONN_HANDLE ConnHandle);
VIP_RETURN VipConnectRequest(IN VIP_VI_HANDLE ViHandle, IN VIP_NET_ADDRESS* LocalAddr,
                             IN VIP_NET_ADDRESS* RemoteAddr, IN VIP_ULONG Timeout,
                             OUT VIP_VI_ATTRIBUTES* RemoteViAttributes);
VIP_RETURN VipDisconnect(IN VIP_VI_HANDLE ViHandle);

/* ---- completion queues ---- */
VIP_RETURN VipCreateCQ(IN VIP_NIC_HANDLE NicHandle, IN VIP_ULONG EntryCount,
                       OUT VIP_CQ_HANDLE* CQHandle);
VIP_RETURN VipDestroyCQ(IN VIP_CQ_HANDLE CQHandle);
VIP_RETURN VipResizeCQ(IN VIP_CQ_HANDLE CQHandle, IN VIP_ULONG EntryCount);
VIP_RETURN VipCQDone(IN VIP_CQ_HANDLE CQHandle, OUT VIP_VI_HANDLE* ViHandle,
                     OUT VIP_BOOLEAN* RecvQueue);
VIP_RETURN VipCQWait(IN VIP_CQ_HANDLE CQHandle, IN VIP_ULONG Timeout,
                     OUT VIP_VI_HANDLE* ViHandle, OUT VIP_BOOLEAN* RecvQueue);

/* ---- name service ---- */
VIP_RETURN VipNSInit(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID NSInitInfo);
VIP_RETURN VipNSGetHostByName(IN VIP_NIC_HANDLE NicHandle, IN VIP_CHAR* Name,
                              OUT VIP_NET_ADDRESS* Address, IN VIP_ULONG NameIndex);
VIP_RETURN VipNSShutdown(IN VIP_NIC_HANDLE NicHandle);

/* ==== CLAN extensions ==== */

#define VIP_CLAN_MAX_HOST_ADDRESS 64
#define VIP_CLAN_MAX_DISCRIMINATOR 16
/* Enough room for any address this library reads or writes. */
#define VIP_CLAN_NET_ADDRESS_BYTES (4 + VIP_CLAN_MAX_HOST_ADDRESS + VIP_CLAN_MAX_DISCRIMINATOR)

/* Receive-descriptor status bit (sect. 3.7.2): the message continues in the
 * next receive descriptor. Only set on VIs with SplitRequests. */
#define VIP_STATUS_CLAN_MORE 0x100000

/* Memory peers can write: an exported CLAN region (a memfd mapped shared),
 * page-rounded and zero-filled. Register it (or any part) with VipRegisterMem
 * to use it for receive buffers. */
VIP_RETURN VipClanAllocMem(IN VIP_NIC_HANDLE NicHandle, IN VIP_ULONG Length,
                           OUT VIP_PVOID* VirtualAddress);
/* VIP_INVALID_STATE while it is still registered or in use: a receive
 * buffer posted in it, a descriptor in it posted or completed but not yet
 * handed back (VipSendDone/Wait, VipRecvDone/Wait), or a queued send's
 * buffer in it. */
VIP_RETURN VipClanFreeMem(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID VirtualAddress);

/* Wait modes (paper 004 sect. 3.3: event-driven waiting and polling, chosen
 * by the application). ADAPTIVE spins while the thread that will answer runs
 * on another CPU, for at most the spin budget (CLAN_SPIN_NS), then sleeps;
 * POLL spins until done or timed out and never sleeps; BLOCK sleeps at once.
 * DEFAULT: a VI follows its NIC; a NIC, CLAN_WAIT_MODE (else ADAPTIVE). */
#define VIP_CLAN_WAIT_DEFAULT 0
#define VIP_CLAN_WAIT_ADAPTIVE 1
#define VIP_CLAN_WAIT_POLL 2
#define VIP_CLAN_WAIT_BLOCK 3

#define VIP_CLAN_TRANSFER_AUTO 0 /* PIO up to PioThreshold bytes, DMA above */
#define VIP_CLAN_TRANSFER_PIO 1
#define VIP_CLAN_TRANSFER_DMA 2

typedef struct {
  /* sect. 3.7.1: a send that finds no receive descriptor waits for one
   * instead of being dropped (or breaking a reliable connection). */
  VIP_BOOLEAN DeferSends;
  /* sect. 3.7.2, receiving side: a message larger than this VI's first
   * receive descriptor may continue in the following ones (their Status
   * carries VIP_STATUS_CLAN_MORE, except the last). */
  VIP_BOOLEAN SplitRequests;
  VIP_UINT32 TransferMode; /* VIP_CLAN_TRANSFER_* */
  VIP_ULONG PioThreshold;  /* bytes; default 1024 */
  /* How VipSendWait and VipRecvWait on this VI wait (VIP_CLAN_WAIT_*);
   * VIP_CLAN_WAIT_DEFAULT (0, the default): the NIC's. */
  VIP_UINT32 WaitMode;
} VIP_CLAN_VI_ATTRIBUTES;

/* Any time; SplitRequests applies to receive descriptors posted afterwards. */
VIP_RETURN VipClanSetViAttributes(IN VIP_VI_HANDLE ViHandle,
                                  IN const VIP_CLAN_VI_ATTRIBUTES* Attributes);
VIP_RETURN VipClanQueryViAttributes(IN VIP_VI_HANDLE ViHandle,
                                    OUT VIP_CLAN_VI_ATTRIBUTES* Attributes);

typedef struct {
  /* sect. 3.8: revoke peers' access to a receive buffer's memory when its
   * descriptor completes (the CLAN region's cookie is reissued once no posted
   * descriptor uses it). Default VIP_TRUE. */
  VIP_BOOLEAN RevokeOnCompletion;
  /* Entries of the PIO mapping cache (imported remote regions, LRU). Default 16. */
  VIP_ULONG MappingCacheEntries;
  /* How waits on this NIC go (VIP_CLAN_WAIT_*): its VIs' that say
   * VIP_CLAN_WAIT_DEFAULT, and VipCQWait on its CQs. */
  VIP_UINT32 WaitMode;
} VIP_CLAN_NIC_ATTRIBUTES;

VIP_RETURN VipClanSetNicAttributes(IN VIP_NIC_HANDLE NicHandle,
                                   IN const VIP_CLAN_NIC_ATTRIBUTES* Attributes);
VIP_RETURN VipClanQueryNicAttributes(IN VIP_NIC_HANDLE NicHandle,
                                     OUT VIP_CLAN_NIC_ATTRIBUTES* Attributes);

#define VIP_CLAN_REPLACEMENT_RANDOM 0
#define VIP_CLAN_REPLACEMENT_LRU 1

/* The NIC's resident set (paper 004 sect. 4), fixed when it is opened: each
 * connected VI is an endpoint, whose channel is resident only while it holds
 * one of the NIC's frames. VIs beyond the frames wait in host memory and are
 * made resident when a message arrives or is sent, evicting another. */
typedef struct {
  VIP_ULONG Frames;       /* VIs resident at once; default 1024 */
  VIP_ULONG RemapNs;      /* emulated cost of one re-mapping; at most 1e9, default 20000 */
  VIP_UINT32 Replacement; /* VIP_CLAN_REPLACEMENT_*; default (Config null) RANDOM */
  /* VIs of other hosts. Null or empty: the environment's ($CLAN_WIRE_LISTEN,
   * $CLAN_WIRE_PROVIDER, $CLAN_OOB_LISTEN), else none: this host only; a
   * $CLAN_WIRE_PROVIDER that is set wins over WireProvider. Zero the whole
   * structure before filling it: these fields follow the older ones.
   * WireListen: "HOST:PORT" of this host where the NIC's wire (libfabric)
   * listens; peers' sends land over it. WireProvider: its libfabric provider
   * (default "tcp"). OobListen: "HOST:PORT" where the connection manager also
   * listens on tcp; VIs of other hosts connect to "NAME@HOST:PORT" (port 0:
   * any free one, VipClanQueryNicOobPort tells which). */
  const VIP_CHAR* WireListen;
  const VIP_CHAR* WireProvider;
  const VIP_CHAR* OobListen;
} VIP_CLAN_NIC_CONFIG;

/* VipOpenNic with a resident set of the given shape (Config null: the
 * defaults). VIP_INVALID_PARAMETER for Frames 0, RemapNs above 1e9, an
 * unknown Replacement or a malformed OobListen; VIP_ERROR_RESOURCE if the
 * wire or a listener cannot be opened (the emulated NIC's error record says
 * why). */
VIP_RETURN VipClanOpenNic(IN const VIP_CHAR* DeviceName, IN const VIP_CLAN_NIC_CONFIG* Config,
                          OUT VIP_NIC_HANDLE* NicHandle);

/* The tcp port the NIC's connection manager listens on (OobListen), where
 * VIs of other hosts reach it as "NAME@HOST:PORT"; 0 when it has none. */
VIP_RETURN VipClanQueryNicOobPort(IN VIP_NIC_HANDLE NicHandle, OUT VIP_UINT16* Port);

typedef struct {
  VIP_UINT64 MappingHits;
  VIP_UINT64 MappingMisses;
  VIP_UINT64 MappingEvictions;
  VIP_UINT64 PioSends;
  VIP_UINT64 DmaSends;
  VIP_UINT64 DroppedSends; /* overrun on unreliable VIs */
  VIP_UINT64 Revocations;
  VIP_UINT64 Remaps;    /* VIs made resident on demand */
  VIP_UINT64 Evictions; /* VIs sent back to host memory to free a frame */
} VIP_CLAN_NIC_STATS;

VIP_RETURN VipClanQueryNicStats(IN VIP_NIC_HANDLE NicHandle, OUT VIP_CLAN_NIC_STATS* Stats);

/* Whether this VI's receive completions go to its receive CQ (default
 * VIP_TRUE; VIP_INVALID_STATE for a VI created without one). While muted,
 * arriving messages wake no VipCQWait and completions make no CQ entries:
 * the queue behaves as if it had no CQ (VipRecvDone/VipRecvWait find them).
 * Unmuting makes no entries for completions that happened meanwhile; check
 * VipClanRecvReady. Like arming a CQ notification, for a server that watches
 * a connection only between the calls it serves. Once called, the VI is in
 * readiness mode for good: the CQ holds at most one receive entry of this VI
 * at a time, meaning "receive completions are waiting" rather than one per
 * descriptor (a busy VI would otherwise bury the entries of others). */
VIP_RETURN VipClanCQNotify(IN VIP_VI_HANDLE ViHandle, IN VIP_BOOLEAN Enable);
/* Ready = VIP_TRUE if VipRecvDone would return a descriptor now; dequeues
 * nothing (a look that leaves the descriptors to the thread reading them). */
VIP_RETURN VipClanRecvReady(IN VIP_VI_HANDLE ViHandle, OUT VIP_BOOLEAN* Ready);

/* Wakes a thread blocked in VipCQWait on this CQ (or the next caller, if none
 * is blocked): it returns VIP_NOT_DONE. For a thread that waits for a CQ and
 * for something else, e.g. a server that also hands out new connections. */
VIP_RETURN VipClanCQWake(IN VIP_CQ_HANDLE CQHandle);

/* Stops listening on LocalAddr's discriminator, which the first
 * VipConnectWait on it started (VIPL has no such call). Requests waiting to
 * be taken, and later ones, are refused: the requester gets VIP_NO_MATCH at
 * once instead of waiting out its timeout. A VipConnectWait blocked on the
 * discriminator returns VIP_ERROR_RESOURCE. A later VipConnectWait listens
 * again. VIP_INVALID_STATE if nothing listens there. */
VIP_RETURN VipClanStopListening(IN VIP_NIC_HANDLE NicHandle, IN VIP_NET_ADDRESS* LocalAddr);

#ifdef __cplusplus
}
#endif

#endif /* CLANORB_VIA_VIPL_H */
