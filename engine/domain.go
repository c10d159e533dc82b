package engine

import (
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/findings"
	"github.com/questbox/questbox/engine/ledger"
	"github.com/questbox/questbox/engine/outbox"
)

// The engine speaks the domain's vocabulary (package engine/domain): its
// types, statuses, roles and errors are the domain's own, named here so
// that the engine's callers need one import.

type (
	QuestSpec      = domain.QuestSpec
	ConsentRequest = domain.ConsentRequest
	Deliverable    = domain.Deliverable
	ConsentReason  = domain.ConsentReason
	Status         = domain.Status
	QuestStatus    = domain.QuestStatus
	Limits         = domain.Limits
	Counters       = domain.Counters
	Quest          = domain.Quest
	Source         = domain.Source
	Attempt        = domain.Attempt
	Claim          = domain.Claim
	Node           = domain.Node
	Edge           = domain.Edge
	Run            = domain.Run
	Event          = domain.Event
	DeviceEvent    = domain.DeviceEvent
	StatusCounts   = domain.StatusCounts
)

const (
	RoleEgress                = domain.RoleEgress
	AcceptJudge               = domain.AcceptJudge
	AcceptHuman               = domain.AcceptHuman
	ReasonOwnerFinished       = domain.ReasonOwnerFinished
	ReasonStrategistConcluded = domain.ReasonStrategistConcluded
	ReasonNoWork              = domain.ReasonNoWork
	OutcomeGranted            = domain.OutcomeGranted
	ConsentRequested          = domain.ConsentRequested
	ReasonRule                = domain.ReasonRule
	ReasonJudge               = domain.ReasonJudge
	ReasonCheckpoint          = domain.ReasonCheckpoint
	ReasonTeamAccept          = domain.ReasonTeamAccept
	ReasonEgress              = domain.ReasonEgress
	Proposed                  = domain.Proposed
	Pending                   = domain.Pending
	Running                   = domain.Running
	Deferred                  = domain.Deferred
	AwaitingConsent           = domain.AwaitingConsent
	Passed                    = domain.Passed
	Explored                  = domain.Explored
	Growing                   = domain.Growing
	Aborted                   = domain.Aborted
	Exhausted                 = domain.Exhausted
	CouncilPending            = domain.CouncilPending
	Revising                  = domain.Revising
	TeamBlocked               = domain.TeamBlocked
	QuestActive               = domain.QuestActive
	QuestStopped              = domain.QuestStopped
	QuestDone                 = domain.QuestDone
	QuestTerminated           = domain.QuestTerminated
	ModeTeam                  = domain.ModeTeam
	ModeSolo                  = domain.ModeSolo
	RoleScout                 = domain.RoleScout
	RolePOC                   = domain.RolePOC
	RoleStrategist            = domain.RoleStrategist
	RoleOwner                 = domain.RoleOwner
	RoleReviewer              = domain.RoleReviewer
	RoleJudge                 = domain.RoleJudge
	RolePlanner               = domain.RolePlanner
	RoleExecuter              = domain.RoleExecuter
	RoleAccepter              = domain.RoleAccepter
	StagePlan                 = domain.StagePlan
	StageExec                 = domain.StageExec
	StageAccept               = domain.StageAccept
	PhaseDesign               = domain.PhaseDesign
	PhaseRun                  = domain.PhaseRun
	EdgeSpawned               = domain.EdgeSpawned
	EdgeGrewTo                = domain.EdgeGrewTo
	EdgeAbortedTo             = domain.EdgeAbortedTo
	EdgeProposedFrom          = domain.EdgeProposedFrom
	EdgePromoted              = domain.EdgePromoted
	EdgeCouncilOf             = domain.EdgeCouncilOf
	EdgeCouncilReply          = domain.EdgeCouncilReply
	EdgeStagesInto            = domain.EdgeStagesInto
	EdgeMakesPlan             = domain.EdgeMakesPlan
	EdgeExecutes              = domain.EdgeExecutes
	EdgeRejectsTo             = domain.EdgeRejectsTo
	EdgeAcceptsTo             = domain.EdgeAcceptsTo
	SourceCLI                 = domain.SourceCLI
	SourceDashboard           = domain.SourceDashboard
	SourceMQTT                = domain.SourceMQTT
	ReasonStoppedByOwner      = domain.ReasonStoppedByOwner
	ExitAnswered              = domain.ExitAnswered
	ExitTimeout               = domain.ExitTimeout
	ExitKilled                = domain.ExitKilled
	ExitCrashed               = domain.ExitCrashed
	ExitDeferred              = domain.ExitDeferred
	ExitInterrupted           = domain.ExitInterrupted
	KindNode                  = domain.KindNode
	KindVerdict               = domain.KindVerdict
	KindConsent               = domain.KindConsent
	KindQuest                 = domain.KindQuest
	KindDevice                = domain.KindDevice
	DevicePress               = domain.DevicePress
	DeviceNetworkUp           = domain.DeviceNetworkUp
	DeviceNetworkDown         = domain.DeviceNetworkDown
	DeviceBrokerUp            = domain.DeviceBrokerUp
	DeviceBrokerDown          = domain.DeviceBrokerDown
	LevelSolo                 = domain.LevelSolo
	LevelTeam                 = domain.LevelTeam
	LevelCouncil              = domain.LevelCouncil
	LevelGates                = domain.LevelGates
	LevelTeams                = domain.LevelTeams
)

var (
	Statuses         = domain.Statuses
	Sources          = domain.Sources
	ErrLocked        = domain.ErrLocked
	ErrIllegalMove   = domain.ErrIllegalMove
	ErrNotFound      = domain.ErrNotFound
	ErrInUse         = domain.ErrInUse
	ErrCorrupt       = domain.ErrCorrupt
	ErrSchema        = domain.ErrSchema
	ErrStoreFailed   = domain.ErrStoreFailed
	ErrNoStore       = domain.ErrNoStore
	ErrReadOnly      = domain.ErrReadOnly
	ErrBackupRefused = domain.ErrBackupRefused
	ErrInvalid       = domain.ErrInvalid
	ErrBusy          = domain.ErrBusy
	ErrStaleConsent  = domain.ErrStaleConsent
	ErrLedgerBroken  = domain.ErrLedgerBroken
	ErrDeviceKey     = domain.ErrDeviceKey
	ErrEventsPruned  = domain.ErrEventsPruned
)

// The ledger's names (package engine/ledger), for the engine's callers.
type (
	LedgerRecord    = ledger.Record
	LedgerSignature = ledger.Signature
	SealState       = ledger.SealState
	DeviceKey       = ledger.DeviceKey
	ExportSeal      = ledger.ExportSeal
)

const (
	OutcomeSalvaged = ledger.OutcomeSalvaged
	DeviceKeyFile   = ledger.DeviceKeyFile
	SealSigned      = ledger.SealSigned
	SealUnsigned    = ledger.SealUnsigned
	SealOtherKey    = ledger.SealOtherKey
	SealMismatch    = ledger.SealMismatch
)

// A quest's findings (package engine/findings), for the engine's callers.
type (
	Result      = findings.Result
	Finding     = findings.Finding
	FindingKind = findings.FindingKind
	Approval    = findings.Approval
	Ending      = findings.Ending
	EndingHow   = findings.EndingHow
)

const (
	FindingConclusion = findings.FindingConclusion
	FindingGrowing    = findings.FindingGrowing
	FindingDeadEnd    = findings.FindingDeadEnd
	EndedByFinish     = findings.EndedByFinish
	EndedByStrategist = findings.EndedByStrategist
	EndedNoWork       = findings.EndedNoWork
	EndedDone         = findings.EndedDone
	EndedByBudget     = findings.EndedByBudget
	EndedByPerson     = findings.EndedByPerson
	EndedForAttention = findings.EndedForAttention
)

// The outbox's names (package engine/outbox), for the engine's callers.
type (
	Subscription = outbox.Subscription
	Batch        = outbox.Batch
)
