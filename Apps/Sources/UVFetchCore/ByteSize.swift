import ArgumentParser

/// A size in bytes as a command line gives it: a whole number, optionally followed by K, M, G
/// or T (any case, an optional B or iB after it) for KiB, MiB, GiB, TiB: `100M` is 104,857,600.
public struct ByteSize: Sendable, Equatable, ExpressibleByArgument {
    /// The size.
    public let bytes: Int64

    /// A size of `bytes`.
    public init(bytes: Int64) { self.bytes = bytes }

    /// Parses `100`, `64K`, `100M`, `1G`, `2GiB`, `1tb`; nil for anything else, and for sizes
    /// that are not positive or do not fit in 63 bits.
    public init?(argument: String) {
        var text = argument.uppercased()
        for unit in ["IB", "B"] where text.hasSuffix(unit) && text.count > unit.count {
            text.removeLast(unit.count)
            break
        }
        var shift: Int64 = 0
        if let last = text.last, let power = ["K": 10, "M": 20, "G": 30, "T": 40][String(last)] {
            shift = Int64(power)
            text.removeLast()
        }
        guard !text.isEmpty, text.allSatisfy(\.isASCII), let number = Int64(text), number > 0,
              number <= Int64.max >> shift else { return nil }
        bytes = number << shift
    }
}
