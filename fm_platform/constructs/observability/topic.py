"""The SNS topic a stack's alarms and events are sent to, and who is subscribed to it.

CloudWatch alarms and EventBridge rules publish to an encrypted topic only when the topic's
KMS key lets their service principals use it (``kms:Decrypt`` and
``kms:GenerateDataKey*``): Amazon SNS Developer Guide, "Encryption at rest", "Enable
compatibility between event sources from AWS services and encrypted topics". The topic
policy lets ``cloudwatch.amazonaws.com`` and ``events.amazonaws.com`` publish for this
account only (``aws:SourceAccount``), and denies any request not made over TLS.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from fm_platform.core.encryption import customer_managed_key
from fm_platform.core.options import Props, options_values
from fm_platform.rules.observability import check_emails, check_topic_arn
from fm_platform.rules.problems import Problems

#: The services that publish to the topic: CloudWatch alarms and EventBridge rules.
PUBLISHERS = ("cloudwatch.amazonaws.com", "events.amazonaws.com")


@dataclass(frozen=True, kw_only=True)
class NotificationTopicOptions:
    """Plain options of :class:`NotificationTopic` (the configuration's ``notifications``
    keys too).

    emails: addresses subscribed to the topic by email; each confirms its subscription from
        the message SNS sends. By default none: subscribe other endpoints (a chat or paging
        integration) to the topic yourself.
    topic_arn: an existing standard SNS topic to send to instead of creating one; its
        policy and key must let CloudWatch and EventBridge publish. By default a topic is
        created.
    """

    emails: tuple[str, ...] = ()
    topic_arn: str | None = None

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        check_emails(problems, "emails", self.emails)
        check_topic_arn(problems, "topic_arn", self.topic_arn)


@dataclass(frozen=True, kw_only=True)
class NotificationTopicProps(NotificationTopicOptions, Props):
    """Options for :class:`NotificationTopic`: the fields of
    :class:`NotificationTopicOptions`, and

    purpose: what the topic tells about, in its display name and key description; by
        default "fm_platform alarms and events".
    """

    purpose: str = "fm_platform alarms and events"


class NotificationTopic(Construct):
    """An SNS topic for a stack's alarms and events: encrypted with a customer-managed key
    (construct ID ``Key``, rotated, retained) that CloudWatch and EventBridge may use,
    TLS-only, publishable by CloudWatch and EventBridge for this account, with an email
    subscription per address. With ``topic_arn`` the existing topic is used (no key,
    policy or topic is created; the subscriptions are).

    Attributes: ``topic``, ``topic_arn`` (what alarms name as their action) and ``key``
    (None for an existing topic).
    """

    def __init__(self, scope: Construct, construct_id: str, props: NotificationTopicProps) -> None:
        """Create (or import) the topic and subscribe ``props.emails``; ``props`` is
        validated first."""
        super().__init__(scope, construct_id)
        props.validate()
        self.key: kms.IKey | None = None
        if props.topic_arn is not None:
            self.topic: sns.ITopic = sns.Topic.from_topic_arn(self, "Topic", props.topic_arn)
        else:
            self.key = customer_managed_key(self, "Key", purpose=f"{props.purpose} (SNS)")
            created = sns.Topic(
                self,
                "Topic",
                display_name=props.purpose[:100],
                master_key=self.key,
                enforce_ssl=True,
            )
            self._let_services_publish(created, self.key)
            self.topic = created
        for email in props.emails:
            self.topic.add_subscription(subscriptions.EmailSubscription(email))
        self.topic_arn: str = self.topic.topic_arn

    @staticmethod
    def _let_services_publish(topic: sns.Topic, key: kms.Key) -> None:
        principals = [iam.ServicePrincipal(service) for service in PUBLISHERS]
        key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AlarmsAndEventsUseTheTopicKey",
                principals=principals,
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],
                # Only on behalf of this account's alarms and rules (Amazon SNS Developer
                # Guide, "Configure AWS KMS permissions for AWS services": the key policy
                # of a topic that services publish to, with aws:SourceAccount).
                conditions={"StringEquals": {"aws:SourceAccount": Stack.of(topic).account}},
            )
        )
        topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AlarmsAndEventsPublish",
                principals=principals,
                actions=["sns:Publish"],
                resources=[topic.topic_arn],
                conditions={"StringEquals": {"aws:SourceAccount": Stack.of(topic).account}},
            )
        )


def notification_topic(
    scope: Construct, notifications: NotificationTopicOptions | None, purpose: str
) -> NotificationTopic | None:
    """A deployment's topic under ``scope`` (``Notifications``, with the output
    ``NotificationTopicArn``; its purpose names ``scope``'s stack), or None without
    ``notifications``."""
    if notifications is None:
        return None
    topic = NotificationTopic(
        scope,
        "Notifications",
        NotificationTopicProps(
            **options_values(NotificationTopicOptions, notifications),
            purpose=f"fm_platform {Stack.of(scope).stack_name} {purpose}",
        ),
    )
    CfnOutput(
        scope,
        "NotificationTopicArn",
        value=topic.topic_arn,
        description="Where this deployment's alarms and events are sent: subscribe to be told",
    )
    return topic
