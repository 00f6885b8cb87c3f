//! The causes of a stuck pod that its events name (issue 24): each a [`PatternId`] recognised from
//! an event's `reason` and decoded message, in the wordings the public incidents of
//! `tests/fixtures/incidents/` print (each constant below cites where it was seen). A message
//! matches a cause only through words its own tool prints for that failure; kubelet's generic
//! `timed out waiting for the condition` (every FailedMount summary ends so) names no cause.

use super::events::{EventView, is_fenced_map_failure, is_multi_attach, is_operation_pending, is_volume_failure};
use super::finding::PatternId;

/// A failure reason of kubelet or the attach-detach controller about a volume, on the pod: a
/// mount/attach/detach failure ([`is_volume_failure`]) or a resize failure ([`is_resize_failure`]).
pub(crate) fn is_pod_volume_failure(e: &EventView) -> bool {
    is_volume_failure(e) || is_resize_failure(e)
}

/// A resize failure reason, on the claim (external-resizer, kubelet) or the pod (kubelet).
/// kubernetes-csi/external-resizer `pkg/controller/controller.go` (`VolumeResizeFailed`),
/// kubernetes/kubernetes `pkg/volume/util/operationexecutor` (`FileSystemResizeFailed`).
pub(crate) fn is_resize_failure(e: &EventView) -> bool {
    matches!(e.reason(), "VolumeResizeFailed" | "FileSystemResizeFailed")
}

/// cephx refusing the node's client: rook/rook#12991 and ceph/ceph-csi#5150 (`rbd: map failed:
/// (1) Operation not permitted`, `(13) Permission denied`), kubernetes/kubernetes#73020 and
/// rook/rook#1110 era in-tree (`auth: unable to find a keyring on /etc/ceph/…`), go-ceph through
/// ceph-csi (`rados: ret=-1, Operation not permitted`, `rados: ret=-13, Permission denied`), the
/// msgr2 client (`handle_auth_bad_method`), and a node-stage secret that does not exist
/// (kubernetes/kubernetes `pkg/volume/csi/csi_client.go`/`csi_attacher.go`: `fetching
/// NodeStageSecretRef … failed`; ceph-csi: `stage secrets cannot be nil or empty`) or lacking
/// its keys (ceph/ceph-csi#543 `missing ID field 'userID' in secrets`, ceph/ceph-csi#67 `RBD key
/// for ID: admin not found`).
const AUTH: &[&str] = &[
    "(1) Operation not permitted",
    "(13) Permission denied",
    "unable to find a keyring",
    "ret=-1, Operation not permitted",
    "ret=-13, Permission denied",
    "handle_auth_bad_method",
    "NodeStageSecretRef",
    "stage secrets cannot be nil or empty",
    "failed to find the secret",
    "missing ID field",
    "key for ID",
];

/// The node's kernel cannot map the image: `RBD image feature set mismatch` (the `rbd` CLI on
/// an old kernel, bmwx4/k8s-in-practice#8, ceph/ceph-csi#1507), ceph-csi's `does not support
/// required features` (ceph/ceph-csi#2397), the `rbd` module missing (kubernetes/kubernetes#23924
/// `rbd: failed to modprobe rbd`).
const KERNEL: &[&str] = &["feature set mismatch", "does not support required features", "failed to modprobe rbd"];

/// The monitors or OSDs unreachable: `rbd: map failed: (110) Connection timed out`
/// (rook/rook#12759, rook/rook#8464 on msgr2 port 3300, ceph/ceph-csi#634), go-ceph `rados:
/// ret=-110, Connection timed out`, librados `error connecting to the cluster`, `monclient(hunting):
/// authenticate timed out`, and the CephFS mount helper finding no usable monitor (`unable to get
/// monitor info from DNS SRV`, ceph/ceph-csi#4667, rook/rook#11521).
const UNREACHABLE: &[&str] = &[
    "(110) Connection timed out",
    "ret=-110",
    "exit status 110",
    "error connecting to the cluster",
    "authenticate timed out",
    "monclient(hunting)",
    "unable to get monitor info",
];

/// The filesystem on the volume: `mount(8)`'s `wrong fs type, bad option, bad superblock on
/// /dev/…` (only for a block device: on a CephFS `mon:/` source it means a missing mount helper,
/// kubernetes/kubernetes#66325, and names no cause here), k8s.io/mount-utils
/// `'fsck' found errors on device … but could not correct them`, e2fsck's `UNEXPECTED
/// INCONSISTENCY`, XFS's `Filesystem has duplicate UUID` (a clone mounted beside its source),
/// `Structure needs cleaning` (EUCLEAN).
const FILESYSTEM: &[&str] =
    &["found errors on device", "UNEXPECTED INCONSISTENCY", "duplicate UUID", "Structure needs cleaning"];

/// kubelet's CSI plugin: `driver name rbd.csi.ceph.com not found in the list of registered CSI
/// drivers` (ceph/ceph-csi#710, #1105, #1218; rook/rook#4183, #5391, #8791).
const NOT_REGISTERED: &[&str] = &["not found in the list of registered CSI drivers"];

/// kubelet without the in-tree RBD plugin (removed in 1.31): `no volume plugin matched`
/// (kubernetes/kubernetes `pkg/volume/plugins.go` `FindPluginBySpec`).
const IN_TREE_GONE: &[&str] = &["no volume plugin matched"];

/// The image or subvolume gone: ceph-csi `RBD image not found` / `image not found`
/// (ceph/ceph-csi#1915), `rbd: error opening image … (2) No such file or directory`, CephFS
/// `subvolume … does not exist`.
const MISSING: &[&str] = &["image not found", "Image not found", "error opening image"];

/// A CephFS kernel client the MDS evicted: its stale mount answers the node plugin's `stat` of
/// the staging path with EACCES (rook/rook#14587, ceph/ceph-csi#2892 `stat
/// /var/lib/kubelet/plugins/kubernetes.io/csi/pv/<pv>/globalmount: permission denied`; the
/// eviction itself in the MDS log, ceph/ceph-csi#5265 `Evicting (and blocklisting) client
/// session`). Not the `(13) Permission denied` of cephx, which names a refused key.
const CEPHFS_EVICTED: &[&str] = &["globalmount: permission denied", "Evicting (and blocklisting) client"];

/// The external attacher never answered: kubernetes/kubernetes `pkg/volume/csi/csi_attacher.go`
/// `timed out waiting for external-attacher of <driver> CSI driver to attach volume`, and
/// `attachment timeout for volume`.
const ATTACH: &[&str] = &["timed out waiting for external-attacher", "attachment timeout for volume"];

fn any(e: &EventView, needles: &[&str]) -> bool {
    needles.iter().any(|n| e.has(n))
}

/// The cause an event names by its own words, if any. The order decides between two named in
/// one message (a keyring message printed beside a feature mismatch is the mismatch's noise:
/// the map failed on the features, kubernetes/kubernetes#73020).
pub(crate) fn cause_of(e: &EventView) -> Option<PatternId> {
    let p = if any(e, NOT_REGISTERED) {
        PatternId::CsiDriverNotRegistered
    } else if any(e, CEPHFS_EVICTED) {
        PatternId::CephfsClientEvicted
    } else if any(e, IN_TREE_GONE) {
        PatternId::InTreeRbdUnsupported
    } else if any(e, KERNEL) {
        PatternId::KernelCannotMap
    } else if is_fenced_map_failure(e) || e.has("(108) Cannot send after transport endpoint shutdown") {
        PatternId::ClientBlocklisted
    } else if any(e, AUTH) {
        PatternId::CephAuthFailed
    } else if any(e, UNREACHABLE) {
        PatternId::CephUnreachable
    } else if any(e, FILESYSTEM) || (e.has("wrong fs type") && e.has("bad superblock on /dev/")) {
        PatternId::FilesystemError
    } else if any(e, MISSING) || (e.has("subvolume") && e.has("does not exist")) {
        PatternId::BackingImageMissing
    } else if any(e, ATTACH) {
        PatternId::AttachError
    } else if is_resize_failure(e) {
        PatternId::ResizeStuck
    } else if e.has("(6) No such device or address") && e.has("map failed") {
        // ENXIO from `rbd map` without the CLI's own hint: the kernel refused the image
        PatternId::KernelCannotMap
    } else {
        return None;
    };
    Some(p)
}

/// The cause `p` an event named, for a volume that is CephFS (`cephfs`) or not: a fenced CephFS
/// client is `cephfs-client-evicted` (the MDS evicts it; no image, no `rbd unmap`), and the
/// CephFS stale-mount wording names nothing on an RBD volume.
pub(crate) fn for_volume(p: PatternId, cephfs: bool) -> Option<PatternId> {
    match (p, cephfs) {
        (PatternId::ClientBlocklisted, true) => Some(PatternId::CephfsClientEvicted),
        (PatternId::CephfsClientEvicted, false) => None,
        _ => Some(p),
    }
}

/// True for a driver's `operation … already exists` refusal: the driver is still busy with an
/// earlier call on the volume (a hung `rbd map`, an unmount in flight). Alone it proves no cause.
pub(crate) fn is_busy_driver(e: &EventView) -> bool {
    is_operation_pending(e)
}

/// True for the attach-detach controller's `Multi-Attach error`.
pub(crate) fn is_multi(e: &EventView) -> bool {
    is_multi_attach(e)
}

/// The explanation and read-only guidance of each named cause, in CephFS words for a CephFS
/// volume (`cephfs`) where the two differ.
pub(crate) fn explanation(p: PatternId, cephfs: bool) -> &'static str {
    if cephfs && let Some(text) = cephfs_explanation(p) {
        return text;
    }
    match p {
        PatternId::CephAuthFailed => {
            "The node's Ceph client was refused by cephx: the key it presents is missing, wrong or rotated, \
or lacks the caps the operation needs (mapping an exclusive-lock image needs `osd blocklist` caps to \
break a dead owner's lock, ceph/ceph-csi#5150). Check, read-only: the node-stage secret the PV names \
(`kubectl get pv <pv> -o jsonpath='{.spec.csi.nodeStageSecretRef}'`, then that secret exists), \
`ceph auth get client.<id>` for its caps, and `dmesg | grep -i 'rbd\\|libceph'` on the node. Fix the \
key or caps on the Ceph side; nothing here is fixed by deleting pods."
        }
        PatternId::KernelCannotMap => {
            "The node's kernel cannot map this image: the image has features the kernel RBD client does \
not support (object-map, fast-diff, deep-flatten on old kernels), the kernel is too old, or the `rbd` \
module is missing. Check `rbd info <pool>/<image>` (features) and `uname -r`, `dmesg | tail` on the \
node. The fix is a choice: `rbd feature disable <pool>/<image> <features>` (changes the image), \
`imageFeatures: layering` in the StorageClass for new volumes, or the rbd-nbd mounter."
        }
        PatternId::CephUnreachable => {
            "The node cannot reach the Ceph monitors or OSDs in time: `rbd map` or a librados call timed \
out. Usual causes: monitors down or out of quorum, a firewall on 3300 (msgr2) or 6789 (msgr1), the \
kernel client pointed at the msgr2 port without `ms_mode`, a wrong `mon_host`. Check from the node: \
`nc -zv <mon> 3300` and `6789`, `dmesg | grep libceph`, and `ceph -s` from a host that can reach the \
cluster. Driver `operation … already exists` refusals that follow are the hung call still running."
        }
        PatternId::FilesystemError => {
            "The block device mapped, but its filesystem cannot be mounted: it is damaged (`fsck` found \
errors it could not correct, a bad superblock), not the type the PV says, or an XFS clone with the same \
UUID as its source mounted on the same node (mount with `nouuid`, or `xfs_admin -U generate`). Do not \
let anything format it. Map it read-only on a spare host and run `fsck -n` / `xfs_repair -n` first."
        }
        PatternId::CsiDriverNotRegistered => {
            "kubelet on this node has no registration for the volume's CSI driver: the node plugin \
DaemonSet pod (csi-rbdplugin / csi-cephfsplugin) is not running on the node, its driver-registrar \
sidecar failed, or the kubelet root dir differs from the plugin's (`/var/lib/kubelet`). Check the \
DaemonSet's pod on the node and its `driver-registrar` container log; restarting that pod re-registers."
        }
        PatternId::RwoClaimShared => {
            "The claim is ReadWriteOnce and pods of it run on two different healthy nodes (two replicas \
of a Deployment, a rollout with surge). This is a workload defect, not a lost node: never force-delete \
or fence the node that holds the volume. Scale to one replica, use `strategy: Recreate`, or a RWX \
volume (CephFS)."
        }
        PatternId::ResizeStuck => {
            "An expansion of the claim failed or waits: the resizer could not grow the image \
(`VolumeResizeFailed`) or kubelet could not grow the filesystem (`FileSystemResizeFailed`, the claim's \
`FileSystemResizePending` condition). Check the claim's conditions and events, the csi-resizer \
sidecar log, and `rbd info` for the image's size."
        }
        PatternId::AttachError => {
            "The attach step failed: the VolumeAttachment records an attach or detach error, or the \
external attacher (csi-attacher sidecar of the provisioner Deployment) never answered. Check \
`kubectl get volumeattachment <name> -o yaml` (status.attachError / detachError) and that the \
provisioner pod with its csi-attacher container is running."
        }
        PatternId::InTreeRbdUnsupported => {
            "The PV uses the in-tree `kubernetes.io/rbd` plugin, which kube-controller-manager and kubelet \
no longer have: Kubernetes 1.31 removed it together with its CSI migration, so nothing translates \
`spec.rbd` to ceph-csi either, and no pod will ever attach or mount it on this release. The volume \
must be moved to ceph-csi (a static CSI PV naming the same image, its claim re-bound to it) before \
pods can use it; nothing here is fixed by deleting pods or fencing."
        }
        PatternId::ClientBlocklisted => {
            "The node's Ceph client is blocklisted: Ceph answers its map or I/O with ESHUTDOWN (108), \
what a fenced client gets after a network partition or a lock broken by another node. Check `ceph osd \
blocklist ls` for the node's address and `dmesg | grep libceph` on the node; a fenced kernel client \
needs its mounts gone (the pod rescheduled, the device unmapped) before it recovers."
        }
        PatternId::BackingImageMissing => {
            "The RBD image or CephFS subvolume the PV names does not exist in Ceph (deleted by hand, \
another cluster, a pool renamed). Check `rbd info <pool>/<image>` (or `ceph fs subvolume info`) and \
the PV's volumeAttributes; only a restore brings the data back."
        }
        PatternId::RwopClaimInUse => {
            "The claim is ReadWriteOncePod: only one pod in the whole cluster may use it, and another pod \
already does, so the scheduler leaves this one Pending (it names no node). This is a workload defect \
(a second replica, a rollout with surge, a Job rerun beside the old pod), not a storage fault: never \
force-delete the pod that holds the claim or fence its node. Stop the old pod the ordinary way (scale \
down, `strategy: Recreate`), or give the new pod a higher priority so the scheduler preempts the old one."
        }
        PatternId::CephfsClientEvicted => {
            "The node's CephFS kernel client was evicted by the MDS (and blocklisted): after a network \
hiccup or an unresponsive client the MDS drops its session, and the mount it left answers every `stat` \
with \"permission denied\" (or I/O with ESHUTDOWN, 108). A hypothesis until confirmed: `ceph tell \
mds.<fs>:0 client ls` no longer lists the node's client, `ceph osd blocklist ls` lists its address, \
`dmesg | grep -i ceph` on the node says the session was lost. The kernel does not remount by itself: \
the stale mount must go (unmount the staging path on the node, or restart the node's \
csi-cephfsplugin pod, then recreate the pod). Nothing on the Ceph side needs fixing."
        }
        _ => "",
    }
}

/// The CephFS wording of the causes whose RBD wording speaks of images, `rbd map` or the rbd
/// kernel module; `None` where one text fits both.
fn cephfs_explanation(p: PatternId) -> Option<&'static str> {
    let text = match p {
        PatternId::CephAuthFailed => {
            "The node's CephFS client was refused by cephx: the key in the node-stage secret is missing, \
wrong or rotated, or lacks the MDS/OSD caps for this filesystem's path. Check, read-only: the \
node-stage secret the PV names, `ceph auth get client.<id>` (caps `mds allow rw`, `osd allow rw tag \
cephfs …`), and `dmesg | grep -i ceph` on the node."
        }
        PatternId::CephUnreachable => {
            "The node cannot reach the Ceph monitors or MDS in time: the CephFS kernel mount (or a \
librados call of the node plugin) timed out or found no monitor. Usual causes: monitors down, a \
firewall on 3300 (msgr2) or 6789 (msgr1), monitor addresses changed after a failover. Check from the \
node: `nc -zv <mon> 3300` and `6789`, `dmesg | grep -i ceph`, and `ceph -s` / `ceph fs status` from a \
host that can reach the cluster."
        }
        PatternId::BackingImageMissing => {
            "The CephFS subvolume the PV names does not exist (deleted by hand or by its claim's \
reclaim policy, another filesystem, another subvolume group). Check `ceph fs subvolume info <fs> \
<subvolume> --group_name csi` and the PV's volumeAttributes (fsName, subvolumeName); only a restore \
brings the data back."
        }
        _ => return None,
    };
    Some(text)
}
