import Synchronization

/// Knobs and counters of the netlink shell for tests that force its rare paths (a receive buffer
/// so small that a burst of changes overruns it), and of cellular routing. Not API (`@_spi(Testing) import UVNetworking`).
@_spi(Testing)
public enum ReachabilityTesting {
    /// The receive buffer a netlink socket opened from now on asks for, in bytes; 0 (the
    /// default) for the shell's own size.
    public static let receiveBufferBytes = Atomic<Int32>(0)
    /// How many overruns (ENOBUFS, or a datagram cut short) the shells of this process have read.
    public static let overruns = Atomic<Int>(0)
    /// The directory that connections refusing cellular (`Request.allowsCellularAccess` false)
    /// read interface kinds from, in place of `/sys/class/net`, for pools made from now on: a
    /// tree of the test's own that marks a veth as cellular. nil (the default) for sysfs.
    public static let interfaceRoot = Mutex<String?>(nil)
}
