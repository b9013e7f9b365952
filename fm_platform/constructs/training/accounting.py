"""A MySQL-compatible database for Slurm accounting (slurmdbd): Aurora MySQL Serverless v2
next to the cluster, its credentials generated into Secrets Manager.

HyperPod connects slurmdbd to it through ``Orchestrator.Slurm.AccountingDatabase`` (managed
Slurm mode with continuous provisioning; SageMaker developer guide, "Using an external
accounting database with SageMaker HyperPod Slurm clusters": HyperPod does not create,
host or manage the database; the cluster's AMI must be one released after August 30, 2026;
a cluster cannot go back to the controller's own database afterwards).

The password is not rotated. The secret HyperPod reads "contains the user name and
password" slurmdbd connects with (same page), and slurmdbd reads ``StoragePass`` from its
configuration when it starts; neither HyperPod's page nor Slurm's slurmdbd.conf
documentation says that the secret is read again later. A rotation (single- or multi-user:
both change the credential slurmdbd holds) would therefore cut accounting off at its first
run. Rotate by hand when needed: change the password, then restart slurmdbd on the
controller.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from aws_cdk import CfnResource, Duration, RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_rds as rds
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from fm_platform.core.compliance import acknowledge
from fm_platform.core.encryption import customer_managed_key
from fm_platform.core.options import Props, checked
from fm_platform.rules.accounting import check_capacity_range
from fm_platform.rules.problems import Problems

#: The port HyperPod connects to by default (``ClusterAccountingDatabase.Port``) and the
#: database listens on.
MYSQL_PORT = 3306
#: Aurora MySQL 3 (MySQL 8.0 compatible; Slurm's accounting storage supports MySQL and
#: MariaDB).
ENGINE_VERSION = rds.AuroraMysqlEngineVersion.VER_3_10_0
USER_NAME = "slurm"
#: Characters the generated password leaves out: RDS's own exclusions (" @ / \\) and what
#: a Slurm configuration file or a shell would read specially (# starts a comment).
EXCLUDED_PASSWORD_CHARACTERS = " %+~`#$&*()|[]{}:;<>?!'/@\"\\="
BACKUP_RETENTION = Duration.days(7)
LOG_EXPORTS = ("audit", "error", "general", "slowquery")


@dataclass(frozen=True, kw_only=True)
class SlurmAccountingDatabaseOptions:
    """Plain options of :class:`SlurmAccountingDatabase`.

    min_capacity_acu / max_capacity_acu: the Aurora Serverless v2 capacity range in Aurora
        capacity units (0.5-256, steps of 0.5); by default 0.5 to 2. The minimum is billed
        around the clock: slurmdbd keeps its connection open.
    """

    min_capacity_acu: float = 0.5
    max_capacity_acu: float = 2.0

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        check_capacity_range(problems, "", self.min_capacity_acu, self.max_capacity_acu)


@dataclass(frozen=True, kw_only=True)
class SlurmAccountingDatabaseProps(SlurmAccountingDatabaseOptions, Props):
    """Options for :class:`SlurmAccountingDatabase`: the fields of
    :class:`SlurmAccountingDatabaseOptions`, and

    vpc: the cluster's VPC.
    subnets: the database subnet group's subnets, in at least two Availability Zones (RDS
        requires it; :meth:`ClusterNetwork.database_subnets` gives the cluster's private
        subnet and two small ones).
    availability_zone: where the writer runs (the cluster's AZ, to keep traffic in it).
    cluster_security_group: the cluster's security group: the only one admitted on 3306.
    encryption_key: KMS key of the storage and the secret; by default a customer-managed
        key with rotation is created and retained.
    """

    vpc: ec2.IVpc
    subnets: Sequence[ec2.ISubnet]
    availability_zone: str
    cluster_security_group: ec2.ISecurityGroup
    encryption_key: kms.IKey | None = None

    def _check(self, problems: Problems) -> None:
        props = checked(problems, self)
        props.check(problems)
        if props.subnets is not None and len(props.subnets) < 2:
            problems.add(
                "subnets",
                len(props.subnets),
                "give subnets in at least two Availability Zones: a DB subnet group needs them",
            )


class SlurmAccountingDatabase(Construct):
    """An Aurora MySQL Serverless v2 cluster (one writer, in the cluster's AZ) for Slurm
    accounting.

    Storage and secret encrypted with a customer-managed key; the master user's password
    generated into Secrets Manager, not rotated (slurmdbd keeps the password it started
    with; see the module docstring); IAM authentication on; deletion protection; 7 days of
    backups; the error, slow-query, general and audit logs exported to CloudWatch Logs (the
    last two stay empty unless their parameters are turned on). Its security group admits
    only the cluster's security group, on 3306. The database, its instance, subnet group,
    security group, secret and key are retained on stack deletion.

    Attributes: ``database`` (the DatabaseCluster), ``endpoint``, ``port``, ``secret``,
    ``secret_arn``, ``security_group``, ``encryption_key``. Construct IDs ``Database``,
    ``Key`` and ``SecurityGroup`` are stable.
    """

    def __init__(
        self, scope: Construct, construct_id: str, props: SlurmAccountingDatabaseProps
    ) -> None:
        """Create the database under ``scope``; ``props`` is validated first."""
        super().__init__(scope, construct_id)
        props.validate()
        self.encryption_key: kms.IKey = props.encryption_key or customer_managed_key(
            self, "Key", purpose="Slurm accounting database and its secret"
        )
        self.security_group = self._security_group(props)
        self.database = self._database(props)
        # Generated credentials always come with a secret (``secret`` is its attachment to
        # the database; the secret itself is the child ``Secret``).
        self.secret = cast(secretsmanager.ISecret, self.database.secret)
        self._retain()
        self.endpoint: str = self.database.cluster_endpoint.hostname
        self.port: int = MYSQL_PORT
        self.secret_arn: str = self.secret.secret_arn
        self._acknowledge()

    def _security_group(self, props: SlurmAccountingDatabaseProps) -> ec2.SecurityGroup:
        """The database's group: MySQL from the cluster's security group only."""
        database = ec2.SecurityGroup(
            self,
            "SecurityGroup",
            vpc=props.vpc,
            description="Slurm accounting database: MySQL from the cluster only",
            allow_all_outbound=False,
        )
        database.add_ingress_rule(
            props.cluster_security_group,
            ec2.Port.tcp(MYSQL_PORT),
            "slurmdbd on the cluster's controller",
        )
        return database

    def _database(self, props: SlurmAccountingDatabaseProps) -> rds.DatabaseCluster:
        """The Aurora MySQL Serverless v2 cluster, its one writer and generated
        credentials."""
        return rds.DatabaseCluster(
            self,
            "Database",
            engine=rds.DatabaseClusterEngine.aurora_mysql(version=ENGINE_VERSION),
            writer=rds.ClusterInstance.serverless_v2(
                "Writer", availability_zone=props.availability_zone
            ),
            serverless_v2_min_capacity=props.min_capacity_acu,
            serverless_v2_max_capacity=props.max_capacity_acu,
            vpc=props.vpc,
            vpc_subnets=ec2.SubnetSelection(subnets=list(props.subnets)),
            security_groups=[self.security_group],
            port=MYSQL_PORT,
            credentials=rds.Credentials.from_generated_secret(
                USER_NAME,
                encryption_key=self.encryption_key,
                exclude_characters=EXCLUDED_PASSWORD_CHARACTERS,
            ),
            storage_encryption_key=self.encryption_key,
            iam_authentication=True,
            deletion_protection=True,
            backup=rds.BackupProps(retention=BACKUP_RETENTION),
            cloudwatch_logs_exports=list(LOG_EXPORTS),
            removal_policy=RemovalPolicy.RETAIN,
        )

    def _retain(self) -> None:
        """Retain the secret and the subnet group with the database (the password is not
        rotated: see the module docstring), and leave out the writer's needless
        ``DependsOn``."""
        generated = cast(secretsmanager.Secret, self.database.node.find_child("Secret"))
        generated.apply_removal_policy(RemovalPolicy.RETAIN)
        subnet_group = self.database.node.find_child("Subnets")
        cast(rds.SubnetGroup, subnet_group).apply_removal_policy(RemovalPolicy.RETAIN)
        acknowledge(
            generated,
            "slurmdbd connects with this secret's password, read when it starts; HyperPod's "
            "external accounting page does not say it is read again, so a rotation would cut "
            "accounting off. Rotate by hand: new password, then restart slurmdbd.",
            "AwsSolutions-SMG4",
            "HIPAA.Security-SecretsManagerRotationEnabled",
            "NIST.800.53.R5-SecretsManagerRotationEnabled",
        )
        # aws-cdk-lib makes the writer wait for the subnets' routes to the internet, which a
        # database does not use; without those DependsOn the retained writer needs nothing
        # that deleting the stack deletes (its references order it after its cluster).
        writer = cast(CfnResource, self.database.node.find_child("Writer").node.default_child)
        writer.add_deletion_override("DependsOn")

    def secret_read_statements(self) -> list[iam.PolicyStatement]:
        """What a reader of the credentials needs: the secret's value, decrypted with its
        key through Secrets Manager."""
        return [
            iam.PolicyStatement(
                actions=["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"],
                resources=[self.secret_arn],
            ),
            iam.PolicyStatement(
                actions=["kms:Decrypt"],
                resources=[self.encryption_key.key_arn],
                conditions={"StringLike": {"kms:ViaService": "secretsmanager.*.amazonaws.com"}},
            ),
        ]

    def _acknowledge(self) -> None:
        cluster = cast(CfnResource, self.database.node.default_child)
        writer = cast(CfnResource, self.database.node.find_child("Writer").node.default_child)
        acknowledge(
            cluster,
            "HyperPod's slurmdbd connects on the port its AccountingDatabase sets (3306 by "
            "default); the port is reachable only from the cluster's security group.",
            "AwsSolutions-RDS11",
        )
        acknowledge(
            cluster,
            "Backtrack rewinds the whole cluster in place; accounting records are recovered "
            "by point-in-time restore from 7 days of continuous backups instead.",
            "AwsSolutions-RDS14",
        )
        acknowledge(
            writer,
            "A small accounting database for slurmdbd: the RDS metrics CloudWatch receives "
            "without enhanced monitoring cover it; enhanced monitoring would add an IAM role "
            "with an AWS managed policy and OS metrics billed as CloudWatch Logs.",
            "HIPAA.Security-RDSEnhancedMonitoringEnabled",
            "NIST.800.53.R5-RDSEnhancedMonitoringEnabled",
        )
        acknowledge(
            writer,
            "Aurora keeps continuous backups of the cluster (7 days, point-in-time restore) "
            "and the cluster is retained with its key when the stack is deleted; an AWS "
            "Backup plan would duplicate them for accounting records.",
            "HIPAA.Security-RDSInBackupPlan",
            "NIST.800.53.R5-RDSInBackupPlan",
        )
