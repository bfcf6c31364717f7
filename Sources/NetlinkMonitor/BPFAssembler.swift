import LinuxSystem

/// Builds classic BPF programs with labels instead of counted jump offsets.
///
/// Classic BPF jumps only forward, conditional ones by at most 255 instructions. A
/// conditional jump whose target is `.accept` or `.drop` gets its own `ret` right after it,
/// so an early way out never needs a far target; `.label` targets are resolved when the
/// program is assembled, and an offset that does not fit fails the assembly.
struct BPFAssembler {
    /// Where a conditional jump goes.
    enum Target: Equatable {
        /// The instruction after the jump (after its inline `ret`, if it has one).
        case next
        /// Skip this many instructions after the jump.
        case skip(UInt8)
        /// A placed label.
        case label(Int)
        /// Keep the datagram: an inline `ret` right after the jump.
        case accept
        /// Drop the datagram: an inline `ret 0` right after the jump (after an inline accept).
        case drop
    }

    /// A jump label; create with `newLabel()`, then `place(_:)` it once.
    typealias Label = Int

    private enum Item {
        case instruction(SocketFilterInstruction)
        case conditional(code: UInt16, constant: UInt32, then: Target, else: Target)
        case jumpAlways(Label)
        case label(Label)
    }

    private var items: [Item] = []
    private var labels = 0
    /// What `.accept` returns.
    let acceptVerdict: UInt32

    /// Creates an empty program whose `.accept` targets return `acceptVerdict`.
    init(acceptVerdict: UInt32) {
        self.acceptVerdict = acceptVerdict
    }

    /// A fresh label.
    mutating func newLabel() -> Label {
        labels += 1
        return labels
    }

    /// Places `label` before the next instruction.
    mutating func place(_ label: Label) {
        items.append(.label(label))
    }

    /// Appends one instruction.
    mutating func emit(_ instruction: SocketFilterInstruction) {
        items.append(.instruction(instruction))
    }

    /// `if A == constant`.
    mutating func jump(if constant: UInt32, then: Target, else otherwise: Target = .next) {
        items.append(.conditional(code: Op.jumpIfEqual, constant: constant, then: then, else: otherwise))
    }

    /// `if A > constant`.
    mutating func jump(ifGreater constant: UInt32, then: Target, else otherwise: Target = .next) {
        items.append(.conditional(code: Op.jumpIfGreater, constant: constant, then: then, else: otherwise))
    }

    /// `if A >= constant`.
    mutating func jump(ifGreaterOrEqual constant: UInt32, then: Target = .next, else otherwise: Target) {
        items.append(.conditional(code: Op.jumpIfGreaterOrEqual, constant: constant, then: then, else: otherwise))
    }

    /// `if A >= X`.
    mutating func jump(ifGreaterOrEqualIndex otherwise: Target) {
        items.append(.conditional(code: Op.jumpIfGreaterOrEqualIndex, constant: 0, then: .next, else: otherwise))
    }

    /// An unconditional jump to `label` (32-bit offset: any distance).
    mutating func jump(to label: Label) {
        items.append(.jumpAlways(label))
    }

    /// The program; nil when a conditional jump cannot reach its label.
    func assembled() -> [SocketFilterInstruction]? {
        // Layout: where each label lands, counting the inline `ret`s.
        var positions: [Label: Int] = [:]
        var count = 0
        for item in items {
            switch item {
            case .instruction, .jumpAlways: count += 1
            case let .conditional(_, _, then, otherwise): count += 1 + Self.inlineVerdicts(then, otherwise).count
            case let .label(label): positions[label] = count
            }
        }
        var program: [SocketFilterInstruction] = []
        program.reserveCapacity(count)
        for item in items {
            switch item {
            case .label:
                continue
            case let .instruction(instruction):
                program.append(instruction)
            case let .jumpAlways(label):
                guard let target = positions[label], target > program.count else { return nil }
                program.append(.jumpAlways(UInt32(target - program.count - 1)))
            case let .conditional(code, constant, then, otherwise):
                let inline = Self.inlineVerdicts(then, otherwise)
                let after = program.count + 1 + inline.count  // the first instruction past the group
                func offset(_ target: Target) -> UInt8? {
                    let destination: Int
                    switch target {
                    case .accept, .drop: return UInt8(inline.firstIndex(of: target)!)  // its inline ret after the jump
                    case .next: destination = after
                    case let .skip(count): destination = after + Int(count)
                    case let .label(label):
                        guard let position = positions[label] else { return nil }
                        destination = position
                    }
                    let distance = destination - program.count - 1
                    return (0...255).contains(distance) ? UInt8(distance) : nil
                }
                guard let jumpIfTrue = offset(then), let jumpIfFalse = offset(otherwise) else { return nil }
                program.append(SocketFilterInstruction(code: code, jumpIfTrue: jumpIfTrue, jumpIfFalse: jumpIfFalse, constant: constant))
                for verdict in inline { program.append(.ret(verdict == .accept ? acceptVerdict : 0)) }
            }
        }
        return program
    }

    /// The verdicts a conditional jump returns inline, accept first.
    private static func inlineVerdicts(_ then: Target, _ otherwise: Target) -> [Target] {
        [Target.accept, .drop].filter { $0 == then || $0 == otherwise }
    }
}

/// Classic BPF opcodes (<linux/bpf_common.h>, <linux/filter.h>): class | size | mode, or
/// class | operation | source.
enum Op {
    static let jumpIfEqual: UInt16 = 0x15  // BPF_JMP | BPF_JEQ | BPF_K
    static let jumpIfGreater: UInt16 = 0x25  // BPF_JMP | BPF_JGT | BPF_K
    static let jumpIfGreaterOrEqual: UInt16 = 0x35  // BPF_JMP | BPF_JGE | BPF_K
    static let jumpIfGreaterOrEqualIndex: UInt16 = 0x3D  // BPF_JMP | BPF_JGE | BPF_X
}

extension SocketFilterInstruction {
    /// A = the datagram's length.
    static let loadLength = Self(code: 0x80)  // BPF_LD | BPF_W | BPF_LEN
    /// A = the big-endian 32 bits at `offset`.
    static func loadWord(_ offset: UInt32) -> Self { Self(code: 0x20, constant: offset) }  // BPF_LD | BPF_W | BPF_ABS
    /// A = the big-endian 16 bits at `offset`.
    static func loadHalf(_ offset: UInt32) -> Self { Self(code: 0x28, constant: offset) }  // BPF_LD | BPF_H | BPF_ABS
    /// A = the byte at `offset`.
    static func loadByte(_ offset: UInt32) -> Self { Self(code: 0x30, constant: offset) }  // BPF_LD | BPF_B | BPF_ABS
    /// A = the big-endian 32 bits at X + `offset`.
    static func loadWordIndexed(_ offset: UInt32) -> Self { Self(code: 0x40, constant: offset) }  // BPF_LD | BPF_W | BPF_IND
    /// A = the big-endian 16 bits at X + `offset`.
    static func loadHalfIndexed(_ offset: UInt32) -> Self { Self(code: 0x48, constant: offset) }  // BPF_LD | BPF_H | BPF_IND
    /// A = the byte at X + `offset`.
    static func loadByteIndexed(_ offset: UInt32) -> Self { Self(code: 0x50, constant: offset) }  // BPF_LD | BPF_B | BPF_IND
    /// A = `value`.
    static func loadConstant(_ value: UInt32) -> Self { Self(code: 0x00, constant: value) }  // BPF_LD | BPF_IMM
    /// A = M[`slot`].
    static func loadMemory(_ slot: UInt32) -> Self { Self(code: 0x60, constant: slot) }  // BPF_LD | BPF_MEM
    /// X = `value`.
    static func loadIndexConstant(_ value: UInt32) -> Self { Self(code: 0x01, constant: value) }  // BPF_LDX | BPF_IMM
    /// X = M[`slot`].
    static func loadIndex(_ slot: UInt32) -> Self { Self(code: 0x61, constant: slot) }  // BPF_LDX | BPF_MEM
    /// M[`slot`] = A.
    static func store(_ slot: UInt32) -> Self { Self(code: 0x02, constant: slot) }  // BPF_ST
    /// A += `value`.
    static func add(_ value: UInt32) -> Self { Self(code: 0x04, constant: value) }  // BPF_ALU | BPF_ADD | BPF_K
    /// A += X.
    static let addIndex = Self(code: 0x0C)  // BPF_ALU | BPF_ADD | BPF_X
    /// A -= `value`.
    static func subtract(_ value: UInt32) -> Self { Self(code: 0x14, constant: value) }  // BPF_ALU | BPF_SUB | BPF_K
    /// A &= `value`.
    static func and(_ value: UInt32) -> Self { Self(code: 0x54, constant: value) }  // BPF_ALU | BPF_AND | BPF_K
    /// A |= X.
    static let orIndex = Self(code: 0x4C)  // BPF_ALU | BPF_OR | BPF_X
    /// A <<= `count`.
    static func shiftLeft(_ count: UInt32) -> Self { Self(code: 0x64, constant: count) }  // BPF_ALU | BPF_LSH | BPF_K
    /// A >>= X.
    static let shiftRightIndex = Self(code: 0x7C)  // BPF_ALU | BPF_RSH | BPF_X
    /// A = -A.
    static let negate = Self(code: 0x84)  // BPF_ALU | BPF_NEG
    /// A ^= `value`.
    static func xor(_ value: UInt32) -> Self { Self(code: 0xA4, constant: value) }  // BPF_ALU | BPF_XOR | BPF_K
    /// Skip `count` instructions.
    static func jumpAlways(_ count: UInt32) -> Self { Self(code: 0x05, constant: count) }  // BPF_JMP | BPF_JA
    /// X = A.
    static let accumulatorToIndex = Self(code: 0x07)  // BPF_MISC | BPF_TAX
    /// A = X.
    static let indexToAccumulator = Self(code: 0x87)  // BPF_MISC | BPF_TXA
    /// Return `verdict`: bytes of the datagram to keep (0 drops it).
    static func ret(_ verdict: UInt32) -> Self { Self(code: 0x06, constant: verdict) }  // BPF_RET | BPF_K
}
