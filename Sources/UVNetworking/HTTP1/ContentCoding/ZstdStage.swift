import CZstd

/// Undoes zstd (RFC 8878) with one zstd decompression context.
///
/// Frames may follow one another, as gzip's members do (RFC 8878 §3.1), and skippable frames
/// decode to nothing. The window is limited to 8 MiB (`ZSTD_d_windowLogMax` 23), the most
/// RFC 9659 §3 lets an HTTP encoder use: a frame asking for more would make us allocate what a
/// hostile server names, so it is refused as corrupt, whatever its content.
///
/// zstd is given its input one unit at a time (the frame header, then each block), never more
/// than the size it asks for next, short of the header of the block after: zstd reports nothing
/// of a call that fails, so a call that ran on into a damaged block would lose the output of the
/// good one before it, and how much reached the stages after this one (or the size limit) would
/// depend on how the body was cut into reads. And when a call fills the output buffer, zstd is
/// drained with no new input before the next unit goes in, for the same reason.
final class ZstdStage: ContentDecodingStage {
    private let context: OpaquePointer
    private var meter: DecodedOutputMeter
    /// How many input bytes the next call may take: zstd's own hint, less the header of the
    /// block after when the hint counts one in (see the type's comment).
    private var nextUnit = 0
    /// The first bytes of the frame that starts, little-endian, as they arrive: checked before
    /// zstd sees them, so that only RFC 8878 frames are decoded (not the pre-1.0 formats some
    /// builds of libzstd still read).
    private var magic: UInt32 = 0
    private var magicCount = 0
    /// A frame has started and not ended: a body that stops here was cut short.
    private var inFrame = false
    private var output = [UInt8](repeating: 0, count: ContentDecoder.stepBytes)

    typealias Failure = ContentDecoder.Failure

    /// RFC 8878 §3.1.1's magic number, and the skippable frames' (§3.1.2: 16 of them, the low
    /// four bits free).
    private static let frameMagic: UInt32 = 0xFD2F_B528
    private static let skippableMagic: UInt32 = 0x184D_2A50
    /// zstd's block header: what its hint adds for the block after the one it asks for.
    private static let blockHeaderBytes = 3
    /// log2 of RFC 9659's 8 MiB window.
    private static let windowLogMax: Int32 = 23

    /// nil if zstd cannot allocate its context or take the window limit.
    init?(limits: ContentDecoder.Limits) {
        guard let context = ZSTD_createDCtx() else { return nil }
        guard ZSTD_isError(ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, Self.windowLogMax)) == 0 else {
            ZSTD_freeDCtx(context)
            return nil
        }
        self.context = context
        meter = DecodedOutputMeter(limits: limits, coding: .zstd)
    }

    deinit {
        ZSTD_freeDCtx(context)
    }

    func decode(_ bytes: UnsafeRawBufferPointer, received: Int, into decoded: inout [UInt8]) throws(Failure) {
        meter.received = received
        var input = bytes
        while !input.isEmpty {
            if magicCount < 4 {
                inFrame = true
                while magicCount < 4, let byte = input.first {
                    magic |= UInt32(byte) << (8 * magicCount)
                    magicCount += 1
                    input = UnsafeRawBufferPointer(rebasing: input.dropFirst())
                }
                guard magicCount == 4 else { return }
                guard magic == Self.frameMagic || magic & 0xFFFF_FFF0 == Self.skippableMagic else {
                    throw .corrupt("invalid zstd data: a frame starts with 0x\(String(magic, radix: 16)), not zstd's magic number")
                }
                var header = magic.littleEndian
                let taken = withUnsafeBytes(of: &header) { header in
                    Result { () throws(Failure) in try feed(header, into: &decoded) }
                }
                guard case .success(4) = taken else {
                    if case .failure(let failure) = taken { throw failure }
                    throw .corrupt("zstd did not take a frame's magic number")
                }
                continue
            }
            let unit = UnsafeRawBufferPointer(rebasing: input.prefix(nextUnit))
            let consumed = try feed(unit, into: &decoded)
            input = UnsafeRawBufferPointer(rebasing: input.dropFirst(consumed))
        }
    }

    func finish() throws(Failure) {
        guard !inFrame else { throw .corrupt("the zstd stream ended inside a frame") }
    }

    /// One unit to zstd, then as many calls with no input as it takes to drain what it holds;
    /// returns how many bytes of `unit` it took (all of them, but for the last byte of a frame
    /// zstd keeps until its output is out).
    private func feed(_ unit: UnsafeRawBufferPointer, into decoded: inout [UInt8]) throws(Failure) -> Int {
        var source = ZSTD_inBuffer(src: unit.baseAddress, size: unit.count, pos: 0)
        var filled = try call(&source, into: &decoded)
        while filled {
            var nothing = ZSTD_inBuffer(src: unit.baseAddress, size: 0, pos: 0)
            filled = try call(&nothing, into: &decoded)
        }
        return source.pos
    }

    /// One ZSTD_decompressStream call into the output buffer; returns whether it filled it (zstd
    /// may hold more). Notes where the frame stands and what the next unit is.
    private func call(_ source: inout ZSTD_inBuffer, into decoded: inout [UInt8]) throws(Failure) -> Bool {
        var made = 0
        let status = output.withUnsafeMutableBytes { target -> Int in
            var sink = ZSTD_outBuffer(dst: target.baseAddress, size: target.count, pos: 0)
            let status = ZSTD_decompressStream(context, &sink, &source)
            made = sink.pos
            return status
        }
        if ZSTD_isError(status) != 0 { throw failure(status) }
        if made > 0 {
            decoded.append(contentsOf: output[0..<made])
            meter.add(made)
        }
        try meter.check()
        if status == 0 {
            // The frame ended and all of it is out: what follows starts a frame of its own.
            inFrame = false
            magic = 0
            magicCount = 0
            nextUnit = 0
        } else {
            // A hint above the header's size may count the next block's header in; less that
            // header it is never more than the unit asked for. At or below it, it is the unit.
            nextUnit = status > Self.blockHeaderBytes ? status - Self.blockHeaderBytes : status
        }
        return made == output.count
    }

    /// The failure a zstd error code stands for, with zstd's own words for it.
    private func failure(_ status: Int) -> Failure {
        if ZSTD_getErrorCode(status) == ZSTD_error_frameParameter_windowTooLarge {
            return .corrupt("the zstd frame needs a window over 8 MiB, past RFC 9659's limit for HTTP: refused")
        }
        return .corrupt("invalid zstd data: \(String(cString: ZSTD_getErrorName(status)))")
    }
}
