import CBrotliEncoder
import CZstd
import Foundation

// Fixtures for the br and zstd tests, made at test time by the libraries' own encoders
// (libbrotlienc, libzstd's ZSTD_compressStream2): nothing here encodes by hand, so a decoder bug
// cannot hide behind a matching encoder bug of ours.

/// `data` as one brotli stream (RFC 7932) at `quality` (0 to 11) and window `lgwin` (10 to 24).
func brotliCompressed(_ data: Data, quality: Int32 = 5, lgwin: Int32 = 22) -> Data {
    let input = [UInt8](data)
    var size = BrotliEncoderMaxCompressedSize(input.count)
    // 0 means "too large to say"; the inputs here are far smaller, but make room anyway.
    if size == 0 { size = input.count + 1024 }
    var output = [UInt8](repeating: 0, count: size)
    let ok = input.withUnsafeBufferPointer { source in
        BrotliEncoderCompress(quality, lgwin, BROTLI_MODE_GENERIC, source.count, source.baseAddress, &size, &output)
    }
    precondition(ok == BROTLI_TRUE, "BrotliEncoderCompress failed")
    return Data(output[0..<size])
}

/// `data` as one zstd frame (RFC 8878) at `level`.
///
/// `windowLog` nil: the encoder picks the window, knowing the size, and writes it in the frame
/// header. With a `windowLog` the frame is written as a stream of unknown size, so that the
/// header keeps that window however small the content (the encoder would otherwise shrink it
/// to fit), as the RFC 9659 window tests need.
func zstdCompressed(_ data: Data, level: Int32 = 3, windowLog: Int32? = nil, checksum: Bool = true) -> Data {
    let context = ZSTD_createCCtx()!
    defer { ZSTD_freeCCtx(context) }
    precondition(ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)) == 0)
    precondition(ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, checksum ? 1 : 0)) == 0)
    if let windowLog {
        precondition(ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, windowLog)) == 0)
    }
    let input = [UInt8](data)
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: ZSTD_CStreamOutSize())
    input.withUnsafeBytes { source in
        var inBuffer = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
        // With a window asked for, a first call that only continues: ZSTD_e_end on the first
        // call would tell the encoder the whole size.
        var directive = windowLog == nil ? ZSTD_e_end : ZSTD_e_continue
        while true {
            let remaining = chunk.withUnsafeMutableBytes { target -> Int in
                var outBuffer = ZSTD_outBuffer(dst: target.baseAddress, size: target.count, pos: 0)
                let remaining = ZSTD_compressStream2(context, &outBuffer, &inBuffer, directive)
                precondition(ZSTD_isError(remaining) == 0, String(cString: ZSTD_getErrorName(remaining)))
                result += target[0..<outBuffer.pos]
                return remaining
            }
            if directive == ZSTD_e_continue {
                if inBuffer.pos == inBuffer.size { directive = ZSTD_e_end }
                continue
            }
            if remaining == 0 { break }
        }
    }
    return Data(result)
}

/// A zstd skippable frame (RFC 8878 §3.1.2) holding `content`: magic 0x184D2A5?, then the
/// content's size, little-endian. Decoders skip it.
func zstdSkippableFrame(_ content: [UInt8], variant: UInt8 = 0) -> Data {
    var frame = Data([0x50 | (variant & 0x0F), 0x2A, 0x4D, 0x18])
    let size = UInt32(content.count)
    frame += Data([UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 24)])
    return frame + Data(content)
}

/// Bytes that compress like text and JSON do (runs and repeats, not zeros): a fixture that
/// exercises literals and matches alike.
func compressibleText(count: Int, seed: UInt64 = 1) -> Data {
    var state = seed
    var bytes = [UInt8]()
    bytes.reserveCapacity(count)
    let words = ["alpha ", "beta ", "gamma ", "{\"id\": ", "\"name\": \"x\", ", "delta\n", "0123456789", "epsilon "]
    while bytes.count < count {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        let word = words[Int(state >> 61)]
        bytes += word.utf8
        if state >> 58 & 7 == 0 { bytes.append(UInt8(truncatingIfNeeded: state >> 24)) }
    }
    return Data(bytes.prefix(count))
}
