import COpenSSL
import Foundation

/// An OpenSSL memory BIO owned by Swift: the PEM and PKCS#12 readers take their input from one,
/// and OpenSSL's printers (times, PEM writers) write their output into one.
final class MemoryBIO {
    /// The BIO; valid while this object lives.
    let bio: OpaquePointer

    /// An empty BIO to write into.
    init() {
        // BIO_new fails only when memory is exhausted, where nothing else can go on either.
        guard let bio = BIO_new(BIO_s_mem()) else { fatalError("BIO_new failed: out of memory") }
        self.bio = bio
    }

    /// A BIO holding a copy of `data`, to read from. A copy rather than BIO_new_mem_buf over the
    /// bytes: `Data` guarantees its buffer only inside `withUnsafeBytes`, and readers keep the
    /// BIO longer than that.
    convenience init(_ data: Data) {
        self.init()
        let written = data.withUnsafeBytes { raw in
            raw.isEmpty ? 0 : BIO_write(bio, raw.baseAddress, Int32(raw.count))
        }
        precondition(written == data.count, "a memory BIO took \(written) of \(data.count) bytes")
    }

    deinit { BIO_free_all(bio) }

    /// Every byte written and not yet read.
    var data: Data {
        var start: UnsafeMutablePointer<CChar>?
        let count = uvn_BIO_get_mem_data(bio, &start)
        guard let start, count > 0 else { return Data() }
        return Data(bytes: start, count: count)
    }

    /// `data` as UTF-8 text (OpenSSL's printers write ASCII).
    var string: String { String(decoding: data, as: UTF8.self) }
}
